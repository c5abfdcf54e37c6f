package contentstore

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/parallel"
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

// BenchmarkPutBatch compares, in one run, the two ways to store a request's
// 20 new 2 KiB objects in a durable (fsync) directory store: 8 goroutines
// calling Put, each object a batch of its own (how the processor called
// the store before PutBatch), and one PutBatch; with one request at a time
// and with 16 at once; each in segments and as files (the layout before
// segments). Concurrent calls share sync rounds either way.
func BenchmarkPutBatch(b *testing.B) {
	const objects, putWorkers = 20, 8
	for _, requests := range []int{1, 16} {
		for _, mode := range []string{"put", "batch"} {
			for _, layout := range []string{"files", "segments"} {
				b.Run(fmt.Sprintf("requests=%d/%s/%s", requests, mode, layout), func(b *testing.B) {
					st := openLayout(b, layout, dirConfig(filepath.Join(b.TempDir(), "c"), defaultLimits))
					var seq atomic.Int64
					request := func() {
						objs := make([]PutObject, objects)
						for i := range objs {
							objs[i] = PutObject{"bench", "input.messages", message(int(seq.Add(1)))}
						}
						if mode == "batch" {
							for _, o := range st.PutBatch(ctx, objs) {
								if o.Err != nil {
									b.Error(o.Err)
								}
							}
							return
						}
						parallel.For(objects, putWorkers, func(i int) {
							if _, err := st.Put(ctx, objs[i].Tenant, objs[i].Kind, objs[i].Content); err != nil {
								b.Error(err)
							}
						})
					}
					cpu0 := cpuTime()
					if requests == 1 {
						for b.Loop() {
							request()
						}
					} else {
						b.SetParallelism(requests / runtime.GOMAXPROCS(0))
						b.RunParallel(func(pb *testing.PB) {
							for pb.Next() {
								request()
							}
						})
					}
					b.ReportMetric(float64(seq.Load())/b.Elapsed().Seconds(), "objects/s")
					b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(seq.Load()), "cpu-µs/object")
				})
			}
		}
	}
}

// openLayout opens the directory store of c, writing new objects in
// segments or as files.
func openLayout(b *testing.B, layout string, c Config) Store {
	if layout == "files" {
		return openFiles(b, c)
	}
	st, err := Open(ctx, c, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// BenchmarkOpenDirectory: opening a store of 200,000 2 KiB objects (the
// index rebuilt from the segments' records, or the files walked), usage
// counted. The page cache is warm: a cold open reads more.
func BenchmarkOpenDirectory(b *testing.B) {
	const objects, batch = 200_000, 500
	for _, layout := range []string{"files", "segments"} {
		b.Run(layout, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "c")
			c := dirConfig(path, Limits{MaxObjectBytes: DefaultMaxObjectBytes, MaxTotalBytes: 1 << 40})
			c.Directory.Get().Fsync = false
			st := openLayout(b, layout, c)
			for i := 0; i < objects; i += batch {
				objs := make([]PutObject, batch)
				for j := range objs {
					objs[j] = PutObject{"bench", "input.messages", message(i + j)}
				}
				for _, o := range st.PutBatch(ctx, objs) {
					if o.Err != nil {
						b.Fatal(o.Err)
					}
				}
			}
			if err := st.Close(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				st, err := Open(ctx, c, nil)
				if err != nil {
					b.Fatal(err)
				}
				if u := st.Usage(); u.UsedBytes == 0 {
					b.Fatal("nothing counted")
				}
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuTime is the CPU time the process has used, in user and kernel mode.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
