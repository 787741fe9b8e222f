#!/bin/bash
# Container health check for images without curl or wget: one HTTP/1.0 GET
# to this container's own server over bash's /dev/tcp; healthy on a 200.
#
#   mancala-healthcheck [PATH]     PATH: /healthz (default) or /readyz
#
# The port is APP_BIND's (0.0.0.0:8080 in the image).
set -u
path=${1:-/healthz}
port=${APP_BIND:-0.0.0.0:8080}
port=${port##*:}
exec 3<>"/dev/tcp/127.0.0.1/${port}" || exit 1
printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$path" >&3
IFS= read -r -t 5 status <&3 || exit 1
case $status in
  "HTTP/"*" 200 "*) exit 0 ;;
  *) exit 1 ;;
esac
