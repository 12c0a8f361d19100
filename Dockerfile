# Hokm (حکم) Telegram bot.
#
#   docker build -t hokm .
#   docker run -d --name hokm -e BOT_TOKEN=... -v hokm-data:/data hokm
#   (webhook mode: add -e WEBHOOK_URL=https://host:8443 -p 8443:8443)
#
# SQLite lives in the /data volume (/data/hokm.sqlite3); set DATABASE_URL
# (postgres://...) to use PostgreSQL instead. Migrations run when the bot starts.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src

# Dependencies first, in their own layer: an install of the bare project metadata
# (no packages yet) pulls every dependency and is cached until pyproject.toml changes.
COPY pyproject.toml README.md* ./
RUN pip install .

# The bot itself (core, telegram_bot with its Alembic migrations); no dev extras.
COPY core ./core
COPY telegram_bot ./telegram_bot
RUN pip install --no-deps --force-reinstall . \
    && rm -rf /src

# Translations, compiled at build time (the bot uses a .mo when it is newer than the .po).
WORKDIR /app
COPY babel.cfg ./
COPY locales ./locales
RUN pybabel compile -d locales -D hokm --statistics

RUN useradd --system --uid 10001 --user-group --home-dir /app --shell /usr/sbin/nologin hokm \
    && mkdir -p /data \
    && chown hokm:hokm /data

ENV HOKM_DATA_DIR=/data \
    HOKM_LOCALES_DIR=/app/locales

VOLUME ["/data"]
USER hokm

CMD ["python", "-m", "telegram_bot"]
