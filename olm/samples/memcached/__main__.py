import sys

from olm.samples.memcached.operator import main

sys.exit(main())
