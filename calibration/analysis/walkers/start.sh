#!/bin/sh
# A container entrypoint's start-up, as many images' docker-entrypoint.sh do it: read the
# settings, prepare run-time directories, check and record a few things, then hand over to the
# service (here /bin/true). measure.sh copies it into the rootfs as /etc/app/start.sh.
set -e
. /etc/app/env
for f in /etc/app/conf.d/*.conf; do
  . "$f"
done
name=$(grep '^name=' /etc/app/app.conf | sed 's/^name=//')
port=$(sed -n 's/^port=//p' /etc/app/app.conf)
mkdir -p "$APP_HOME/run" "$APP_HOME/log"
echo $$ > "$APP_HOME/run/$name.pid"
if [ -f /etc/hostname ]; then cat /etc/hostname > "$APP_HOME/run/host"; fi
ls /etc/app > /dev/null
date > "$APP_HOME/log/started"
echo "$name port=$port workers=$WORKERS timeout=$TIMEOUT uid=$(id -u)" > "$APP_HOME/log/config"
exec true
