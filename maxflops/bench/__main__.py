import sys

from ..cli import quiet_broken_pipe
from . import main

quiet_broken_pipe()
sys.exit(main())
