package ingest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// TestHashAheadReadsAndHashesTheUpload: what the parser reads through a
// hashAhead is the upload, byte for byte, and its hash and size are the
// upload's, whatever the size against the buffers.
func TestHashAheadReadsAndHashesTheUpload(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, hashBufBytes - 1, hashBufBytes, hashBufBytes + 1, hashBufs*hashBufBytes + 17} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rand.IntN(256))
		}
		a := newHashAhead(iotest.HalfReader(bytes.NewReader(data)))
		got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(a, int64(n/2))))
		if err != nil {
			t.Fatal(err)
		}
		rest, err := io.ReadAll(a)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rest...)
		want := sha256.Sum256(data)
		if !bytes.Equal(got, data) || !bytes.Equal(a.sum(), want[:]) || a.size() != int64(n) {
			t.Fatalf("%d bytes: read %d, size %d, sum ok %v", n, len(got), a.size(), bytes.Equal(a.sum(), want[:]))
		}
	}
}

// TestHashAheadErrorsAndStop: a read error reaches the parser after the
// bytes before it, and stopping part way ends the reading goroutine.
func TestHashAheadErrorsAndStop(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	a := newHashAhead(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)))
	b, err := io.ReadAll(a)
	if string(b) != "abc" || !errors.Is(err, boom) {
		t.Fatalf("read %q, %v", b, err)
	}
	a.stop()

	big := newHashAhead(bytes.NewReader(make([]byte, 10*hashBufs*hashBufBytes)))
	if _, err := io.ReadFull(big, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	big.stop() // returns: the goroutine is not left reading ahead
	big.stop()
	if n := big.size(); n < 10 || n > (hashBufs+1)*hashBufBytes {
		t.Fatalf("read %d bytes ahead", n)
	}
}
