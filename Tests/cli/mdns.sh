#!/usr/bin/env bash
# mDNS: the box announces itself through avahi-daemon; a second box takes the next name.
# Runs alone in a scratch folder of its own: Tests/cli/mdns.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

# mDNS: the box announces acapella.local and its page through avahi-daemon
# (started here with a system bus when the machine has none running).
if ! avahi-daemon --check 2>/dev/null && [[ $(id -u) == 0 ]]; then
  mkdir -p /run/dbus
  # A socket left by a bus that is gone does not answer: start one.
  if ! dbus-send --system --dest=org.freedesktop.DBus --type=method_call --print-reply / org.freedesktop.DBus.GetId >/dev/null 2>&1; then
    rm -f /run/dbus/pid
    dbus-daemon --system --fork 2>/dev/null || true
  fi
  avahi-daemon --daemonize --no-drop-root --no-chroot 2>/dev/null || true
  for _ in $(seq 20); do avahi-daemon --check 2>/dev/null && break; sleep 0.2; done
fi
if avahi-daemon --check 2>/dev/null; then
  mdnsport=$((20000 + RANDOM % 20000))
  # A name of this run's own (another box on the network may be acapella.local).
  name="acapella-test-$$-box"  # not ending in a digit: avahi would count that up
  printf '{ "web": { "port": %d, "name": "%s" } }' "$mdnsport" "$name" > "$work/mdns1.json"
  printf '{ "web": { "port": %d, "name": "%s" } }' "$((mdnsport + 1))" "$name" > "$work/mdns2.json"
  "$acapella" run --config "$work/mdns1.json" --data "$work/mdns1" --seconds 90 --device sim >/dev/null 2>"$work/mdns1.err" &
  mdns1=$!
  for _ in $(seq 150); do grep -q "mdns: announced" "$work/mdns1.err" 2>/dev/null && break; sleep 0.2; done
  check "the box announces itself" contains "$(cat "$work/mdns1.err")" "mdns: announced as $name.local ("
  check "its name resolves to the box" matches "$(avahi-resolve -4 -n "$name.local" 2>&1)" "^$name.local	[0-9.]+$"
  check "the page is a service on its port" contains "$(avahi-browse -rtp _http._tcp 2>&1)" "Acapella\\032box;Web Site;local;$name.local;"
  check "on the box's port" contains "$(avahi-browse -rtp _http._tcp 2>&1 | grep "$name.local")" ";$mdnsport;"
  "$acapella" run --config "$work/mdns2.json" --data "$work/mdns2" --seconds 60 --device sim >/dev/null 2>"$work/mdns2.err" &
  mdns2=$!
  # Both boxes run until killed: on a slow machine the first must still be
  # announced when the second starts.
  for _ in $(seq 150); do grep -q "mdns: announced" "$work/mdns2.err" 2>/dev/null && break; sleep 0.2; done
  kill -0 "$mdns1" 2>/dev/null || echo "cli: the first box had stopped before the second announced itself" >&2
  check "a second box takes the next name, and says so" contains "$(cat "$work/mdns2.err")" "$name.local is taken on this network; trying $name-2.local"
  check "and is announced under it" contains "$(cat "$work/mdns2.err")" "mdns: announced as $name-2.local ("
  check "the second box never printed the name it did not get as its address" equals "$(grep -c "web: http://$name.local" "$work/mdns2.err" || true)" "0"
  check "it prints the name it got, with its code" contains "$(cat "$work/mdns2.err")" "web: http://$name-2.local:"
  grep -q "announced as $name-2.local" "$work/mdns2.err" || sed 's/^/cli: the second box said: /' "$work/mdns2.err" | head -20 >&2
  kill "$mdns1" "$mdns2" 2>/dev/null; wait "$mdns1" "$mdns2" 2>/dev/null || true
  printf '{ "web": { "port": %d, "name": false } }' "$mdnsport" > "$work/noname.json"
  "$acapella" run --config "$work/noname.json" --data "$work/mdns3" --seconds 2 --device sim >/dev/null 2>"$work/mdns3.err" || true
  check "web.name false: not announced" equals "$(grep -c 'mdns:' "$work/mdns3.err")" "0"
else
  skipped "MDNS CHECKS SKIPPED (no avahi-daemon running and none could be started here)"
fi

finish
