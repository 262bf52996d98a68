//! Benchmark harness for `smcpd`, the smcp MCP server (revision 2026-07-28, Streamable HTTP and
//! stdio).
//!
//! This is a harness, not a test: it measures and prints, and asserts nothing about speed.
//!
//! # Layout
//!
//! | item | role |
//! |---|---|
//! | [`wire`] | the exact request bytes the load sends and the response bytes the baseline writes |
//! | [`stats`] | percentiles and medians |
//! | [`target`] | loopback-only URL parsing (the load generator refuses anything else) |
//! | [`procstat`] | server CPU time, RSS and open file descriptors from `/proc/<pid>` |
//! | [`pin`] | a process run on a chosen CPU (`taskset`) |
//! | [`client`] | a hyper HTTP/1.1 keep-alive client for `POST /mcp` (`smcp-load`, `soak`) |
//! | [`dpop`] | DPoP proofs signed ahead of a run, each used once (`smcp-load --dpop-key`, the `echo-dpop` case) |
//! | [`listen`] | raw `subscriptions/listen` streams and a cheap notification reader (`bench-listen`, `soak`) |
//! | [`report`] | the JSON line `smcp-load` prints and `bench-driver` reads |
//! | `src/bin/bench-baseline.rs` | the physical-limit baseline server |
//! | `src/bin/smcp-load.rs` | the load generator |
//! | `src/bin/bench-driver/` | starts the servers, runs interleaved rounds, prints the table (`print.rs`) |
//! | `src/bin/bench-tasks.rs` | SEP-2663 tasks through one URL: create, poll to completion; tasks/s, completion time, server and Redis CPU per task (`scripts/bench cluster`) |
//! | `src/bin/bench-listen.rs` | N idle `subscriptions/listen` streams, one change: memory per stream, fan-out time (`scripts/bench listen`) |
//! | `src/bin/files-baseline.rs` | the SEP-2631 transfer baseline: a minimal HTTPS endpoint that hashes uploads to disk and streams downloads (`scripts/bench files`) |
//! | `src/bin/stdio-baseline.rs` | the stdio baseline: newline-delimited JSON echo, read and written the way `smcpd --stdio` does (through the reactor, or the blocking pool with `--blocking-io`), with no MCP |
//! | `src/bin/bench-gateway.rs` | echo through `smcpd gateway` to an smcpd upstream over HTTP and over stdio, against the same upstreams called directly: the gateway's own CPU per call, the latency it adds (`scripts/bench gateway`) |
//! | `src/bin/bench-stdio.rs` | echo round trips over stdio with 1 and 16 in flight, `smcpd --stdio` against `stdio-baseline`, either way of doing stdio or both (`scripts/bench stdio`) |
//! | `src/bin/bench-coldstart.rs` | exec to the first answered echo and the resident set 1 s later, `smcpd` on its defaults against `bench-baseline`, 50 runs each (`scripts/bench coldstart`) |
//! | `src/bin/soak.rs` | the soak driver behind `scripts/soak [MINUTES]`: echo load, 1,000 listen streams, MRTR rounds and catalog toggles against one `smcpd`; asserts RSS growth, fds back to baseline, zero errors, full delivery |
//! | `scripts/bench` (workspace root) | builds the binaries and runs `bench-driver` |
//!
//! Dependencies: the library, `bench-baseline`, `smcp-load` and `bench-driver` need only
//! hyper, tokio and serde — the baseline is the physical-limit reference and shares no code
//! with smcpd. `smcp-server` and `smcp-proto` are dependencies of this package only for
//! `files-baseline`, which deliberately uses smcpd's TLS stack, accept loop and sha-256
//! digest so that its transfer figures differ from smcpd's by the protocol alone, and for
//! `stdio-baseline`, which opens standard input and output exactly as smcpd does
//! (`smcp_server::StdioInput`, `StdioOutput`) so that the stdio ratio compares MCP, not I/O.
//!
//! # Running it
//!
//! ```text
//! scripts/bench                      # full: echo, progress × c = 1, 16, 64; 3 interleaved rounds
//! scripts/bench --quick              # smoke: one ~1 s round at c = 1, 16 (run by scripts/test)
//! scripts/bench --against baseline   # baseline vs a second baseline: validates the harness
//! scripts/bench --rounds 5 --duration 10 --concurrency 16,64 --cases echo
//! scripts/bench --cases echo,echo-jwt,echo-dpop  # what a JWT, and a DPoP proof, add per request
//! scripts/bench --ab main            # A/B: smcpd of `main` (A) vs the working tree (B), one run
//! scripts/bench listen --ab main 2000  # the listen fan-out bench against both, with B/A ratios
//!
//! bench-driver --smcpd A/smcpd --smcpd-b B/smcpd --label-a old --label-b new
//! bench-baseline --listen 127.0.0.1:0          # prints `listening on http://ADDR/mcp`
//! smcp-load --url http://127.0.0.1:PORT/mcp -c 16 --duration 5 --warmup 1 --tool echo
//! smcp-load --url … --tool progress_echo       # sends a progressToken, expects 10 notifications
//! smcp-load --url … --requests 100000          # a request count instead of a duration
//! smcp-load --url … --tool echo --dump         # one request, raw body on stdout
//! smcp-load --url … --bearer TOKEN              # Authorization: Bearer on every request
//! smcp-load --url … --bearer TOKEN --dpop-key client.pem  # DPoP: a fresh proof per request
//! ```
//!
//! Reading the table: `load` is how busy the load generator's own core was. At ≥ 90 % the
//! generator, not the server, sets the pace (our hyper client needs about as much CPU per
//! request as the baseline server), so the baseline's req/s is a floor and req/s ratios are
//! flattered; `CPU µs/req` (server CPU per request) is the figure that stays honest there.
//! `other` is CPU used by anything else on the machine during the round (another build, a
//! neighbour VM's steal); rounds with ≥ 0.1 core of it are repeated (`--retry-noisy`), and
//! the table warns if some stayed disturbed.
//!
//! # Method
//!
//! Mirrors how the other MCP implementations were measured (shared `ECOSYSTEM.md` §4): the
//! servers are pinned to CPU 0 and the load generator to CPU 1 with `taskset`; for each case
//! (`echo` JSON response, `progress` = 10 `notifications/progress` over SSE then the result)
//! and each concurrency, rounds alternate baseline, smcpd, baseline, smcpd, … and the report
//! takes the median of the rounds. Server CPU per request is the server's `utime + stime`
//! delta over a round divided by the requests completed in that round (warm-up included on
//! both sides).
//!
//! Authorization (opt-in cases, not in the default or `--quick` set): `echo-jwt` is `echo`
//! with a valid JWT on every request, smcpd verifying it (`--auth-issuer` with a static
//! `--auth-jwks`; a validated token is cached). `echo-dpop` is `echo` with a DPoP-bound JWT
//! and a fresh DPoP proof (ES256) on every request, smcpd run with `--auth-dpop-required`:
//! the difference in CPU µs/req to `echo-jwt` is what checking a proof costs. The proofs are
//! signed before each round ([`dpop`]: signing one costs the load generator more than a whole
//! request), and every `echo-dpop` round runs on a freshly started smcpd, whose in-memory
//! replay guard refuses new proofs once it holds 100,000 live `jti`. The baseline ignores the
//! headers.
//!
//! A/B: with `--smcpd-b`, every round runs baseline, A, B, so both builds see the same machine
//! conditions; each is reported against the baseline, and a B/A table compares them directly
//! (req/s and p99 ratios, server CPU µs per request of A and B and their ratio; `ab` in the
//! JSON). `scripts/bench --ab REV` builds REV's smcpd in a temporary git worktree
//! (`scripts/bench-build-rev`) as A and the working tree's as B.
//!
//! # The baseline
//!
//! `bench-baseline` is the ceiling: hyper 1 HTTP/1.1 with `TCP_NODELAY`, a single `POST /mcp`
//! route that parses the JSON-RPC body with serde_json (borrowing, skipping unknown members)
//! and writes the response with no MCP validation at all. JSON responses carry
//! `Content-Length`; SSE responses are chunked, one body frame per event, each event
//! `data: <json>\n\n` with no `event:`/`id:` lines — the framing smcpd uses.
//!
//! # Matching smcpd byte for byte
//!
//! The comparison is only fair if both servers put the same bytes on the wire. The baseline's
//! bodies are produced by [`wire::write_echo_result`], [`wire::progress_event`] and
//! [`wire::result_event`]. `scripts/bench` (without `--against baseline`) sends one `echo` and
//! one `progress_echo` request to each server before measuring, prints the first difference
//! if the bodies differ and records `bytes_match` per case in `target/bench/report.json`.
//! When it reports a difference (e.g. smcpd adds a `_meta` with serverInfo to results),
//! change the functions in [`wire`] until the bodies are identical and say so here.
//!
//! Status (checked against smcpd from main at 62ac97c, built from a copy with the closure
//! parameter types annotated, since that WIP commit did not compile): smcpd builds results
//! from serde_json maps, so members come out sorted — the result carries
//! `"_meta":{"io.modelcontextprotocol/serverInfo":{…}}` first and content items read
//! `{"text":…,"type":"text"}`; progress params read `{"progress":i,"progressToken":…,"total":10}`.
//! [`wire`] writes exactly that: the echo and progress_echo bodies, the response headers and
//! even the chunk framing of the SSE stream were identical on the wire (Date masked).

pub mod client;
pub mod dpop;
pub mod listen;
pub mod pin;
pub mod procstat;
pub mod report;
pub mod stats;
pub mod target;
pub mod wire;
