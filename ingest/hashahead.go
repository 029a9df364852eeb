package ingest

import (
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"sync"
)

// An upload is hashed (SHA-256 of its bytes as uploaded: the same file
// twice is a no-op) on a goroutine of its own, which reads it a few buffers
// ahead of the parser. Hashing is a fifth of the parsing goroutine's time
// on a large CUR, and that goroutine is what COPY waits for; beside it, the
// hash costs the import no time on a second core (docs/architecture.md,
// "An import").

const (
	hashBufBytes = 256 << 10
	hashBufs     = 4 // read and hashed, not yet parsed, at most: a megabyte
)

// fileHash is the reader an upload is parsed through, and what it says of
// the upload once read: its hash and size.
type fileHash interface {
	io.Reader
	// sum and size are final once Read has returned io.EOF.
	sum() []byte
	size() int64
	// stop ends any reading ahead; size then counts what was read.
	stop()
}

type hashChunk struct {
	b   []byte
	err error // what ended the upload after b; nil: more to come
}

// hashAhead is a fileHash that reads and hashes on a goroutine.
type hashAhead struct {
	h          hash.Hash
	n          int64 // the goroutine's until done is closed
	full, free chan hashChunk
	cur, last  []byte // being read; the buffer it lies in
	err        error
	quit, done chan struct{}
	once       sync.Once
}

func newHashAhead(r io.Reader) *hashAhead {
	a := &hashAhead{h: sha256.New(), full: make(chan hashChunk, hashBufs), free: make(chan hashChunk, hashBufs),
		quit: make(chan struct{}), done: make(chan struct{})}
	for range hashBufs {
		a.free <- hashChunk{b: make([]byte, hashBufBytes)}
	}
	go a.run(r)
	return a
}

func (a *hashAhead) run(r io.Reader) {
	defer close(a.done)
	for {
		var c hashChunk
		select {
		case c = <-a.free:
		case <-a.quit:
			return
		}
		n, err := io.ReadFull(r, c.b[:cap(c.b)])
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF // the last, short buffer
		}
		a.h.Write(c.b[:n])
		a.n += int64(n)
		select {
		case a.full <- hashChunk{b: c.b[:n], err: err}:
		case <-a.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

func (a *hashAhead) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		if a.last != nil {
			a.free <- hashChunk{b: a.last} // never blocks: free holds every buffer
			a.last = nil
		}
		c := <-a.full
		a.cur, a.last, a.err = c.b, c.b, c.err
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

func (a *hashAhead) stop() {
	a.once.Do(func() { close(a.quit) })
	<-a.done
}

func (a *hashAhead) sum() []byte {
	<-a.done
	return a.h.Sum(nil)
}

func (a *hashAhead) size() int64 {
	a.stop()
	return a.n
}
