//! The decisions of one process, batched: while one script call is on its way to Redis, the
//! decisions asked meanwhile wait in a queue, and the next call carries all of them (up to
//! [`MAX_BATCH`]). Each decision stays atomic and is taken in the order asked; a request pays
//! one round trip at most, and a busy process pays one per batch, not per request.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use smcp_server::ratelimit::LimitError;
use tokio::sync::{mpsc, oneshot};

use crate::Redis;

/// At most this many decisions per script call (the script's run time blocks Redis).
pub(crate) const MAX_BATCH: usize = 128;

/// At most this many decisions wait for a call; a request asking beyond it waits for room
/// (within the command timeout), so a flood is slowed, never let through unchecked.
const QUEUE: usize = 4096;

/// One bucket of a decision: its Redis key, its rate, the tokens asked for and those given
/// back (see [`super::script::DECIDE`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Want {
    pub(crate) key: String,
    pub(crate) interval: u64,
    pub(crate) burst: u32,
    pub(crate) want: u32,
    pub(crate) refund: u32,
}

/// What Redis decided on one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Every bucket gave a token: how many each gave (at least 1, at most its `want`).
    Granted(Vec<u32>),
    /// Bucket `bucket` is empty for `retry_after` more; nothing was taken.
    Refused {
        bucket: usize,
        retry_after: Duration,
    },
}

/// One decision and where its answer goes.
struct Ask {
    buckets: Vec<Want>,
    reply: oneshot::Sender<Result<Answer, LimitError>>,
}

/// The queue in front of the process's one batching task, started on first use (and again
/// if the runtime that ran it is gone).
#[derive(Debug, Default)]
pub(crate) struct Batcher {
    queue: Mutex<Option<mpsc::Sender<Ask>>>,
}

impl Batcher {
    /// The queue's sending side, starting the task that drains it when none runs.
    fn sender(
        &self,
        redis: &Redis,
        script: &Arc<redis::Script>,
    ) -> Result<mpsc::Sender<Ask>, LimitError> {
        let mut queue = self
            .queue
            .lock()
            .map_err(|_| LimitError::Store("rate limit queue poisoned".to_owned()))?;
        if let Some(tx) = queue.as_ref().filter(|tx| !tx.is_closed()) {
            return Ok(tx.clone());
        }
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| LimitError::Store("no Tokio runtime to reach Redis from".to_owned()))?;
        let (tx, rx) = mpsc::channel(QUEUE);
        runtime.spawn(drain(redis.clone(), script.clone(), rx));
        *queue = Some(tx.clone());
        Ok(tx)
    }

    /// Asks for one decision and waits for it (bounded by `redis`' command timeout, in the
    /// queue and on the wire together).
    pub(crate) async fn decide(
        &self,
        redis: &Redis,
        script: &Arc<redis::Script>,
        buckets: Vec<Want>,
    ) -> Result<Answer, LimitError> {
        let tx = self.sender(redis, script)?;
        let timeout = redis.inner.timeout;
        let (reply, answer) = oneshot::channel();
        let asked = async move {
            tx.send(Ask { buckets, reply })
                .await
                .map_err(|_| LimitError::Store("the rate limit task stopped".to_owned()))?;
            answer
                .await
                .map_err(|_| LimitError::Store("the rate limit task stopped".to_owned()))?
        };
        tokio::time::timeout(timeout, asked)
            .await
            .unwrap_or(Err(LimitError::Timeout(timeout)))
    }
}

/// The batching task: waits for a decision, takes every other one already queued (up to
/// [`MAX_BATCH`]), runs them in one script call, answers each. Ends when every limiter sharing
/// the queue is gone.
async fn drain(redis: Redis, script: Arc<redis::Script>, mut rx: mpsc::Receiver<Ask>) {
    let mut batch: Vec<Ask> = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = rx.recv().await {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(ask) => batch.push(ask),
                Err(_) => break,
            }
        }
        // A request that gave up (its own timeout) no longer needs its decision.
        batch.retain(|ask| !ask.reply.is_closed());
        if batch.is_empty() {
            continue;
        }
        match run(&redis, &script, &batch).await {
            Ok(decisions) => {
                for (ask, decision) in batch.drain(..).zip(decisions) {
                    let _ = ask.reply.send(decision);
                }
            }
            Err(error) => {
                for ask in batch.drain(..) {
                    let _ = ask.reply.send(Err(error.clone()));
                }
            }
        }
    }
}

/// One script call for `batch` (see [`super::script::DECIDE`] for its arguments and answer).
async fn run(
    redis: &Redis,
    script: &redis::Script,
    batch: &[Ask],
) -> Result<Vec<Result<Answer, LimitError>>, LimitError> {
    let mut call = script.prepare_invoke();
    for ask in batch {
        call.arg(ask.buckets.len());
        for want in &ask.buckets {
            call.key(&want.key)
                .arg(want.interval)
                .arg(want.burst)
                .arg(want.want.max(1))
                .arg(want.refund);
        }
    }
    let mut conn = redis.conn();
    let answer: Vec<i64> = redis.bounded(call.invoke_async(&mut conn)).await?;
    let expected: usize = batch.iter().map(|ask| 2 + ask.buckets.len()).sum();
    if answer.len() != expected {
        return Err(LimitError::Store(format!(
            "the rate limit script answered {} numbers for {} decisions",
            answer.len(),
            batch.len()
        )));
    }
    let mut rest = answer.as_slice();
    let mut decisions = Vec::with_capacity(batch.len());
    for ask in batch {
        let (head, tail) = rest.split_at(2 + ask.buckets.len());
        rest = tail;
        decisions.push(parse(head, &ask.buckets));
    }
    Ok(decisions)
}

/// One decision's numbers: `worst`, `wait`, then a count per bucket.
fn parse(numbers: &[i64], buckets: &[Want]) -> Result<Answer, LimitError> {
    let unexpected = || {
        LimitError::Store(format!(
            "unexpected answer of the rate limit script: {numbers:?}"
        ))
    };
    match numbers {
        [-1, _, counts @ ..] => counts
            .iter()
            .zip(buckets)
            .map(|(&n, want)| {
                u32::try_from(n)
                    .ok()
                    .filter(|n| (1..=want.want.max(1)).contains(n))
                    .ok_or_else(unexpected)
            })
            .collect::<Result<Vec<u32>, _>>()
            .map(Answer::Granted),
        [bucket, wait, ..] if *bucket >= 0 && *wait > 0 => Ok(Answer::Refused {
            bucket: usize::try_from(*bucket)
                .ok()
                .filter(|b| *b < buckets.len())
                .ok_or_else(unexpected)?,
            retry_after: Duration::from_micros(u64::try_from(*wait).unwrap_or(0)),
        }),
        _ => Err(unexpected()),
    }
}
