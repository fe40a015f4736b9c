"""`python -m server.channels.max.fake --port 9000 --token TOKEN`: serve the fake MAX Bot API until Ctrl+C."""
import sys

from server.channels.max.fake.server import main

sys.exit(main())
