-- post.lua -- wrk script for make bench: sends pre-signed webhook
-- deliveries, each request once, from a file written by bench/run.py.
--
--   wrk -t T -c C -d S --latency -s bench/post.lua URL -- FILE T
--
-- FILE holds records "<header bytes> <body bytes>\n" followed by that many
-- bytes of header lines ("Name: value\r\n") and then the body.  Thread k
-- of T sends records k, k+T, k+2T, ... so that no two threads send the
-- same record; a thread that runs out starts again from its first record
-- (those requests are duplicates; "wrap_laps" counts the restarts).  The
-- request line, Host and Content-Length come from wrk's URL, so one file
-- serves FastCGI and CGI paths alike.
--
-- done() prints one line "BENCH {json}" with the totals and latency
-- percentiles in microseconds, which bench/run.py reads.

local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local reqs = {}
local n = 0
local i = 0
wrapped = 0

function init(args)
  local path, nthreads = args[1], tonumber(args[2] or "1")
  local f = assert(io.open(path, "rb"))
  local data = f:read("*a")
  f:close()
  local host = wrk.headers["Host"] or (wrk.host .. ":" .. wrk.port)
  local head = "POST " .. wrk.path .. " HTTP/1.1\r\nHost: " .. host .. "\r\n"
  local pos, k = 1, 0
  while pos <= #data do
    local nl = data:find("\n", pos, true)
    if nl == nil then break end
    local hl, bl = data:sub(pos, nl - 1):match("^(%d+) (%d+)$")
    hl, bl = tonumber(hl), tonumber(bl)
    local hs = nl + 1
    local bs = hs + hl
    if k % nthreads == tid then
      n = n + 1
      reqs[n] = head .. data:sub(hs, bs - 1) .. "Content-Length: " .. bl ..
        "\r\n\r\n" .. data:sub(bs, bs + bl - 1)
    end
    k = k + 1
    pos = bs + bl
  end
  data = nil
  collectgarbage()
  assert(n > 0, "no requests for this thread in " .. path)
end

function request()
  i = i + 1
  if i > n then
    i = 1
    wrapped = wrapped + 1
  end
  return reqs[i]
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
