package contentstore

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docketlabs/docket/internal/s3test"
)

func message(i int) []byte {
	return fmt.Appendf(nil, `[{"role":"user","parts":[{"type":"text","content":"%d %s"}]}]`, i, strings.Repeat("lorem ipsum ", 160))
}

func BenchmarkCanonicalize(b *testing.B) {
	for _, size := range []int{2 << 10, 10 << 20} {
		msg := []byte(`[{"role": "user", "parts": [{"type": "text", "content": "` + strings.Repeat("lorem ipsum ", size/12) + `"}]}]`)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				Canonicalize(msg)
			}
		})
	}
}

func benchmarkPut(b *testing.B, st Store, content func(i int) []byte) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := content(i)
		b.SetBytes(int64(len(c)))
		if _, err := st.Put(ctx, "bench", "input.messages", c); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkPutDirectory(b *testing.B) {
	for _, fsync := range []bool{false, true} {
		b.Run(fmt.Sprintf("fsync=%v", fsync), func(b *testing.B) {
			c := dirConfig(filepath.Join(b.TempDir(), "c"), defaultLimits)
			c.Directory.Get().Fsync = fsync
			st, err := Open(ctx, c, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			benchmarkPut(b, st, message)
		})
	}
}

// BenchmarkPutDirectoryConcurrent: new 2 KiB objects written by several
// goroutines at once into a durable (fsync) directory store, as the
// contentref processor's writers and concurrent requests do.
func BenchmarkPutDirectoryConcurrent(b *testing.B) {
	for _, p := range []int{8, 64} {
		b.Run(fmt.Sprintf("parallelism=%d", p), func(b *testing.B) {
			st, err := Open(ctx, dirConfig(filepath.Join(b.TempDir(), "c"), defaultLimits), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			var seq atomic.Int64
			b.SetParallelism(p) // p goroutines per CPU
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := st.Put(ctx, "bench", "input.messages", message(int(seq.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(seq.Load())/b.Elapsed().Seconds(), "objects/s")
		})
	}
}

func BenchmarkPut10MB(b *testing.B) {
	big := []byte(`[{"role":"user","parts":[{"type":"text","content":"` + strings.Repeat("lorem ipsum ", 10<<20/12) + `"}]}]`)
	c := dirConfig(filepath.Join(b.TempDir(), "c"), defaultLimits)
	c.Directory.Get().Fsync = false
	st, err := Open(ctx, c, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchmarkPut(b, st, func(i int) []byte { big[len(big)-8] = byte('a' + i%26); return big })
}

func BenchmarkPutS3(b *testing.B) {
	srv := s3test.Start(b)
	st, err := Open(ctx, s3Config(srv, "bench", defaultLimits), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchmarkPut(b, st, message)
}
