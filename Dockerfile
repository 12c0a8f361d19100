# Hokm (حکم) Telegram bot.
#
#   docker build -t hokm .
#   docker run -d --name hokm -e BOT_TOKEN=... -v hokm-data:/data hokm
#   (webhook mode: add -e WEBHOOK_URL=https://host:8443 -p 8443:8443)
#
# SQLite lives in the /data volume (/data/hokm.sqlite3); set DATABASE_URL
# (postgres://...) to use PostgreSQL instead. Migrations run when the bot starts.
# A host folder mounted at /data must be writable by uid 10001 (chown -R 10001:10001);
# the entrypoint says so instead of letting SQLite fail. Several processes on one
# PostgreSQL: docker-compose.yml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src

# Dependencies first, in their own layer, at the versions pinned in constraints.txt.
# The list is pyproject.toml's runtime dependencies (no dev extras), so this layer is
# rebuilt only when one of these two files changes, not for the code or the README.
COPY pyproject.toml constraints.txt ./
RUN python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" > requirements.txt \
    && pip install -c constraints.txt -r requirements.txt

# The bot itself (core, telegram_bot with its Alembic migrations), on the dependencies
# above: --no-deps, so nothing here can change their versions.
COPY README.md ./
COPY core ./core
COPY telegram_bot ./telegram_bot
# The Bot API emulator and its drivers, for `python -m testkit.demo` in the image.
COPY testkit ./testkit
RUN pip install --no-deps . \
    && pip check \
    && rm -rf /src

# Translations, compiled at build time (the bot uses a .mo when it is newer than the .po).
WORKDIR /app
COPY locales ./locales
RUN pybabel compile -d locales -D hokm --statistics

COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh

# chmod: a checkout that lost the executable bit (Windows) still builds a working image.
RUN chmod 755 /usr/local/bin/docker-entrypoint.sh \
    && useradd --system --uid 10001 --user-group --create-home --home-dir /home/hokm \
        --shell /usr/sbin/nologin hokm \
    && mkdir -p /data \
    && chown hokm:hokm /data

# HOKM_IN_CONTAINER: the bot's own messages (no token...) give docker commands.
ENV HOKM_DATA_DIR=/data \
    HOKM_LOCALES_DIR=/app/locales \
    HOKM_IN_CONTAINER=1

VOLUME ["/data"]
USER 10001:10001

ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["python", "-m", "telegram_bot"]
