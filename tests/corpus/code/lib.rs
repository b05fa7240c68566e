use std::collections::HashMap;
use std::fmt;

/// A key-value cache.
#[derive(Debug, Default)]
pub struct Cache {
    items: HashMap<String, String>,
}

/// Things that can be evicted.
pub trait Evict {
    fn evict(&mut self, key: &str);
}

impl Cache {
    /// Make an empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, key: &str) -> Option<&String> {
        self.items.get(key)
    }
}

impl fmt::Display for Cache {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Cache({})", self.items.len())
    }
}

pub enum Größe {
    Klein,
    Groß,
}

pub mod util {
    // Hash a key.
    pub fn hash(key: &str) -> u64 {
        key.len() as u64
    }
}
