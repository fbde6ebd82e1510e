-- post.lua -- wrk script for make bench: sends pre-signed webhook
-- deliveries, each request once, from files written by tests/bench/run.py.
--
--   wrk -t T -c C -d S --latency -s tests/bench/post.lua URL -- PREFIX
--
-- Thread k reads PREFIX.k, records "<header bytes> <body bytes>[ <path>]\n"
-- followed by that many bytes of header lines ("Name: value\r\n") and
-- then the body.  The files hold different events, so no two threads send
-- the same request unless it is one of the redeliveries run.py put there.
-- A thread that reaches the end of its file starts it again (those
-- requests are duplicates; "wrap_laps" counts the restarts).  Records are
-- read one per request, not in init(): wrk starts its clock only after
-- every thread's init(), so a slow init would give the first thread a
-- head start.  The request line, Host and Content-Length come from wrk's
-- URL, so one file serves FastCGI and CGI paths alike.
--
-- done() prints one line "BENCH {json}" with the totals and latency
-- percentiles in microseconds, which tests/bench/run.py reads.

local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local f
local head
wrapped = 0

function init(args)
  local path = args[1] .. "." .. tid
  f = assert(io.open(path, "rb"))
  local host = wrk.headers["Host"] or (wrk.host .. ":" .. wrk.port)
  head = "POST " .. wrk.path .. " HTTP/1.1\r\nHost: " .. host .. "\r\n"
end

function request()
  local line = f:read("*l")
  if line == nil then
    f:seek("set", 0)
    wrapped = wrapped + 1
    line = assert(f:read("*l"), "empty request file")
  end
  local hl, bl, path = line:match("^(%d+) (%d+) ?(%S*)$")
  local h = f:read(tonumber(hl))
  local b = f:read(tonumber(bl))
  local first = head
  -- A record may name its own path (tests/bench/accounts.py's accounts).
  if path ~= "" then
    first = "POST " .. path .. head:sub(#("POST " .. wrk.path) + 1)
  end
  return first .. h .. "Content-Length: " .. bl .. "\r\n\r\n" .. b
end

function done(summary, latency, requests)
  local w = 0
  for _, t in ipairs(threads) do
    w = w + (tonumber(t:get("wrapped")) or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"status_errors":%d,"connect_errors":%d,"read_errors":%d,' ..
    '"write_errors":%d,"timeouts":%d,"p50_us":%d,"p90_us":%d,' ..
    '"p99_us":%d,"max_us":%d,"mean_us":%.1f,"wrap_laps":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.status,
    e.connect, e.read, e.write, e.timeout, latency:percentile(50),
    latency:percentile(90), latency:percentile(99), latency.max,
    latency.mean, w))
end
