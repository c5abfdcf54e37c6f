package timing

import (
	"errors"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for p, want := range map[float64]time.Duration{50: 50, 95: 95, 99: 99, 100: 100, 0.5: 1} {
		if got := Percentile(d, p); got != want {
			t.Errorf("p%v = %d, want %d", p, got, want)
		}
	}
	if got := Percentile([]time.Duration{7}, 95); got != 7 {
		t.Errorf("one value: %d", got)
	}
	if got := Percentile([]time.Duration{1, 2, 3}, 50); got != 2 {
		t.Errorf("p50 of three: %d", got)
	}
}

func TestMeasure(t *testing.T) {
	calls := 0
	s, err := Measure("sleep", 4, func(i int) error {
		calls++
		time.Sleep(time.Duration(i+1) * time.Millisecond)
		return nil
	})
	if err != nil || calls != 4 || s.N != 4 || s.Max < 4*time.Millisecond || s.P50 < 2*time.Millisecond || s.P50 > s.P95 || s.P95 > s.Max {
		t.Fatalf("%+v, %d calls, %v", s, calls, err)
	}
	boom := errors.New("boom")
	if _, err := Measure("fail", 3, func(i int) error {
		if i == 1 {
			return boom
		}
		return nil
	}); !errors.Is(err, boom) {
		t.Fatalf("error: %v", err)
	}
	if _, err := Measure("none", 0, func(int) error { return nil }); err == nil {
		t.Fatal("no calls accepted")
	}
}
