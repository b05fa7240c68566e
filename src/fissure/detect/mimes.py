"""The MIME names fissure uses, and the file-name table that maps onto them."""

from __future__ import annotations

MARKDOWN = "text/markdown"
PYTHON = "text/x-python"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
NOTEBOOK = "application/x-ipynb+json"
RST = "text/x-rst"
JSON = "application/json"
YAML = "application/yaml"
CSV = "text/csv"
TSV = "text/tab-separated-values"
PLAIN = "text/plain"
XML = "application/xml"
BINARY = "application/octet-stream"
ZIP = "application/zip"

CODE = {
    "javascript": "text/x-javascript",
    "typescript": "text/x-typescript",
    "tsx": "text/x-tsx",
    "go": "text/x-go",
    "rust": "text/x-rust",
    "java": "text/x-java",
    "c": "text/x-c",
    "c++": "text/x-c++",
    "ruby": "text/x-ruby",
    "php": "text/x-php",
    "sh": "text/x-sh",
    "csharp": "text/x-csharp",
}

EXTENSIONS: dict[str, str] = {
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".mdown": MARKDOWN,
    ".mkd": MARKDOWN,
    ".mdx": MARKDOWN,
    ".py": PYTHON,
    ".pyi": PYTHON,
    ".pyw": PYTHON,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".pdf": PDF,
    ".docx": DOCX,
    ".ipynb": NOTEBOOK,
    ".rst": RST,
    ".rest": RST,
    ".json": JSON,
    ".yaml": YAML,
    ".yml": YAML,
    ".csv": CSV,
    ".tsv": TSV,
    ".txt": PLAIN,
    ".text": PLAIN,
    ".log": PLAIN,
    ".xml": XML,
    ".js": CODE["javascript"],
    ".mjs": CODE["javascript"],
    ".cjs": CODE["javascript"],
    ".jsx": CODE["javascript"],
    ".ts": CODE["typescript"],
    ".mts": CODE["typescript"],
    ".cts": CODE["typescript"],
    ".tsx": CODE["tsx"],
    ".go": CODE["go"],
    ".rs": CODE["rust"],
    ".java": CODE["java"],
    ".c": CODE["c"],
    ".h": CODE["c"],
    ".cc": CODE["c++"],
    ".cpp": CODE["c++"],
    ".cxx": CODE["c++"],
    ".hh": CODE["c++"],
    ".hpp": CODE["c++"],
    ".hxx": CODE["c++"],
    ".rb": CODE["ruby"],
    ".php": CODE["php"],
    ".sh": CODE["sh"],
    ".bash": CODE["sh"],
    ".zsh": CODE["sh"],
    ".cs": CODE["csharp"],
}

# Interpreter named on a "#!" line → MIME type.
INTERPRETERS: dict[str, str] = {
    "python": PYTHON,
    "node": CODE["javascript"],
    "deno": CODE["typescript"],
    "sh": CODE["sh"],
    "bash": CODE["sh"],
    "zsh": CODE["sh"],
    "dash": CODE["sh"],
    "ksh": CODE["sh"],
    "ruby": CODE["ruby"],
    "php": CODE["php"],
}

# MIME types that are text even though they are not text/*.
TEXTUAL = frozenset({JSON, YAML, NOTEBOOK, XML, "application/javascript", "application/x-sh"})

# Other spellings callers pass for the same formats.
ALIASES: dict[str, str] = {
    "text/x-markdown": MARKDOWN,
    "text/md": MARKDOWN,
    "application/x-yaml": YAML,
    "text/yaml": YAML,
    "text/x-yaml": YAML,
    "text/json": JSON,
    "application/x-ipynb": NOTEBOOK,
    "application/javascript": CODE["javascript"],
    "text/javascript": CODE["javascript"],
    "application/typescript": CODE["typescript"],
    "application/x-sh": CODE["sh"],
    "text/x-shellscript": CODE["sh"],
    "text/x-script.python": PYTHON,
    "application/x-python": PYTHON,
    "text/x-c++src": CODE["c++"],
    "text/x-csrc": CODE["c"],
    "text/xml": XML,
    "text/restructuredtext": RST,
    "text/x-csv": CSV,
}


def normalize(mime: str) -> str:
    """Lower-case ``mime``, drop parameters such as ``; charset=utf-8`` and resolve aliases."""
    bare = mime.split(";", 1)[0].strip().lower()
    return ALIASES.get(bare, bare)


def is_textual(mime: str) -> bool:
    """Whether documents of this MIME type are text that :func:`decode` should read."""
    return mime.startswith("text/") or mime in TEXTUAL or mime.endswith(("+json", "+xml"))
