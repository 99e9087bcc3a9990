# Sourced by .ci/run and .ci/other-servers: starts a redis-server (or valkey-server) binary on a free loopback port,
# without persistence, and stops it again.
#   start_server BINARY   sets server_pid and port (tries five ports: a port found free can be taken before the
#                         server binds it)
#   stop_server           stops it and removes its folder (safe to call twice)

answers_ping() {
  local reply=""
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'PING\r\n' >&3
  read -r -t 1 reply <&3 || true
  exec 3>&-
  [[ "$reply" == +PONG* ]]
}

server_pid=""
server_dir=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
  if [ -n "$server_dir" ]; then
    rm -rf "$server_dir"
    server_dir=""
  fi
}

start_server() {
  local binary=$1
  for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 12000)) # below Linux's ephemeral range, where the tests find their own ports
    answers_ping "$port" && continue
    server_dir=$(mktemp -d -t runbus-ci-redis-XXXXXX)
    "$binary" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
      --dir "$server_dir" --logfile "$server_dir/server.log" &
    server_pid=$!
    for _ in $(seq 1 50); do
      answers_ping "$port" && return 0
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.2
    done
    cat "$server_dir/server.log" >&2 || true
    stop_server
  done
  echo "ci: $binary did not start" >&2
  return 1
}
