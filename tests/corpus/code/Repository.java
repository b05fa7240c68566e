package com.example.store;

import java.util.ArrayList;
import java.util.List;

/**
 * Stores items in memory.
 */
public class Repository<T> {
    private final List<T> items = new ArrayList<>();

    public Repository() {}

    /** Add one item. */
    @Override
    public void add(T item) {
        items.add(item);
    }

    public int size() {
        return items.size();
    }

    /** Named entries. */
    public static class Entry {
        String name;

        String describe() {
            return "entrée " + name;
        }
    }
}

interface Store {
    void clear();
}

enum Mode { READ, WRITE }
