#!/bin/sh
# Tesseract OCR for scanned PDF pages (fissure.parse.pdf_ocr; tests/parse/test_pdf_ocr.py).
# Idempotent: installs only when the tesseract binary is missing. Debian/Ubuntu (apt) only;
# without it, scanned pages are refused with "needs OCR" and the OCR test skips, saying why.
set -eu

if command -v tesseract >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-tesseract: no apt-get here; install Tesseract by hand (scanned PDF pages need it)" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng
