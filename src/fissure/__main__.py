"""``python -m fissure`` runs the command line."""

from fissure.cli import main

main()
