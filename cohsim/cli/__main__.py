"""`python -m cohsim.cli`: the same as the `cohsim` command."""

import sys

from cohsim.cli.app import main

sys.exit(main())
