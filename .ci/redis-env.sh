# Sourced: makes sure Redis answers at REDIS_URL (default redis://127.0.0.1:6379).
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
redis_hostport="${REDIS_URL#redis://}"; redis_hostport="${redis_hostport##*@}"; redis_hostport="${redis_hostport%%/*}"
redis_host="${redis_hostport%%:*}"; redis_port="${redis_hostport##*:}"
[ "$redis_port" = "$redis_host" ] && redis_port=6379
redis_alive() {
  if command -v redis-cli >/dev/null 2>&1; then
    redis-cli -h "$redis_host" -p "$redis_port" ping 2>/dev/null | grep -q PONG
  else
    (exec 3<>"/dev/tcp/$redis_host/$redis_port" && printf 'PING\r\n' >&3 && head -c 5 <&3 | grep -q PONG) 2>/dev/null
  fi
}
if ! redis_alive; then
  if command -v redis-server >/dev/null 2>&1; then
    echo "nothing answers at $REDIS_URL: starting redis-server on 127.0.0.1:$redis_port"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
      --dir /tmp --logfile "/tmp/rowbridge-ci-redis-$redis_port.log"
    for _ in $(seq 1 50); do redis_alive && break; sleep 0.1; done
  fi
  redis_alive || { echo "Redis does not answer at $REDIS_URL and redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }
fi
