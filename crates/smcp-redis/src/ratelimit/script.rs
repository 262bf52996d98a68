//! The decision script: GCRA on every bucket of a request, all or nothing, at Redis' clock.

/// Decisions on the buckets of requests, each all or nothing, in the order given: the GCRA
/// step of each bucket (`smcp_server::ratelimit::gcra`) at Redis' own clock, taking up to
/// `want` tokens at once (an instance's local share, see `super::slices`).
///
/// KEYS: every bucket of every decision, in order. ARGV, per decision: its bucket count `n`,
/// then for each of its `n` buckets the interval (µs), the burst, `want` (≥ 1) and `refund`
/// (tokens an instance took earlier and did not use: given back first, never past a full
/// bucket). A bucket is its theoretical arrival time `tat` (µs since the epoch), and expires
/// when it is full again; it holds `floor((now + burst × interval − max(tat, now)) / interval)`
/// tokens.
///
/// Returns, per decision, `worst`, `wait` and then `n` counts: `-1, 0` and the tokens taken
/// from each bucket (between 1 and its `want`) when every bucket had one, else the index
/// (0-based, within the decision) of the empty bucket with the longest wait, that wait (µs),
/// and `n` zeros (nothing taken; refunds are kept). A later decision sees what an earlier one
/// took.
pub(crate) const DECIDE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
local k, a = 1, 1
while a <= #ARGV do
  local n = tonumber(ARGV[a])
  a = a + 1
  local tats, took = {}, {}
  local worst, wait = -1, 0
  for i = 0, n - 1 do
    local interval = tonumber(ARGV[a + 4 * i])
    local burst = tonumber(ARGV[a + 4 * i + 1])
    local want = tonumber(ARGV[a + 4 * i + 2])
    local refund = tonumber(ARGV[a + 4 * i + 3])
    local tat = tonumber(redis.call('GET', KEYS[k + i])) or now
    tat = tat - refund * interval
    if tat < now then tat = now end
    local avail = math.floor((now + interval * burst - tat) / interval)
    if avail < 1 then
      local w = tat + interval - interval * burst - now
      if w > wait then worst = i; wait = w end
      took[i] = 0
    else
      if avail < want then want = avail end
      took[i] = want
    end
    tats[i] = tat
  end
  for i = 0, n - 1 do
    local give = 0
    if worst < 0 then give = took[i] end
    local interval = tonumber(ARGV[a + 4 * i])
    local refund = tonumber(ARGV[a + 4 * i + 3])
    local nx = tats[i] + give * interval
    if nx > now and (give > 0 or refund > 0) then
      redis.call('SET', KEYS[k + i], string.format('%.0f', nx),
        'PX', math.max(1, math.ceil((nx - now) / 1000)))
    elseif nx <= now and refund > 0 then
      redis.call('DEL', KEYS[k + i])
    end
  end
  out[#out + 1] = worst
  out[#out + 1] = wait
  for i = 0, n - 1 do
    if worst < 0 then out[#out + 1] = took[i] else out[#out + 1] = 0 end
  end
  k = k + n
  a = a + 4 * n
end
return out
";
