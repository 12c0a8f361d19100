import sys

from telegram_bot.runtime.app import main

sys.exit(main())
