"""``python -m neurodyn``: the same command line as the ``neurodyn`` script."""

from neurodyn.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
