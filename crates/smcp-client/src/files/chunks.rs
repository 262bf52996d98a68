//! Upload chunks read straight into buffers that come back when the HTTP client is done with
//! them: a large upload reuses a handful of buffers instead of allocating (and the kernel
//! zeroing) fresh memory for every chunk, and no chunk is copied after it is read.

use std::sync::{Arc, Mutex};

/// Buffers of one size, kept for reuse (at most `keep` of them).
#[derive(Debug)]
pub(super) struct ChunkPool {
    free: Mutex<Vec<Vec<u8>>>,
    size: usize,
    keep: usize,
}

/// A buffer read into, handed to the HTTP client as [`bytes::Bytes`]; back to its pool when
/// dropped.
struct Chunk {
    buf: Vec<u8>,
    len: usize,
    pool: Arc<ChunkPool>,
}

impl AsRef<[u8]> for Chunk {
    fn as_ref(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        self.pool.put(std::mem::take(&mut self.buf));
    }
}

impl ChunkPool {
    /// A pool of `size`-byte buffers keeping at most `keep` spare ones.
    pub(super) fn new(size: usize, keep: usize) -> Arc<Self> {
        Arc::new(Self {
            free: Mutex::new(Vec::with_capacity(keep)),
            size,
            keep,
        })
    }

    /// A buffer of the pool's size, reused when one is free.
    pub(super) fn take(&self) -> Vec<u8> {
        let reused = self.free.lock().ok().and_then(|mut free| free.pop());
        reused.unwrap_or_else(|| vec![0; self.size])
    }

    fn put(&self, buf: Vec<u8>) {
        if buf.len() != self.size {
            return;
        }
        if let Ok(mut free) = self.free.lock()
            && free.len() < self.keep
        {
            free.push(buf);
        }
    }

    /// The first `len` bytes of `buf` as [`bytes::Bytes`], without a copy; `buf` comes back to
    /// the pool once they are dropped.
    pub(super) fn chunk(self: &Arc<Self>, buf: Vec<u8>, len: usize) -> bytes::Bytes {
        bytes::Bytes::from_owner(Chunk {
            len: len.min(buf.len()),
            buf,
            pool: self.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_and_are_reused() {
        let pool = ChunkPool::new(8, 2);
        let mut buf = pool.take();
        buf[..3].copy_from_slice(b"abc");
        let ptr = buf.as_ptr();
        let chunk = pool.chunk(buf, 3);
        assert_eq!(&chunk[..], b"abc");
        let sliced = chunk.slice(1..);
        drop(chunk);
        assert!(
            pool.free.lock().unwrap().is_empty(),
            "a slice still holds it"
        );
        assert_eq!(&sliced[..], b"bc");
        drop(sliced);
        let again = pool.take();
        assert_eq!(again.as_ptr(), ptr, "the same buffer, reused");
        assert_eq!(again.len(), 8);
    }

    #[test]
    fn the_pool_keeps_at_most_its_spares() {
        let pool = ChunkPool::new(4, 1);
        let (a, b) = (pool.take(), pool.take());
        drop(pool.chunk(a, 4));
        drop(pool.chunk(b, 4));
        assert_eq!(pool.free.lock().unwrap().len(), 1);
        // A length past the buffer is clamped, never read beyond it.
        let c = pool.chunk(pool.take(), 99);
        assert_eq!(c.len(), 4);
    }
}
