package groupcommit

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// Jobs that arrive while a round runs all go in the next one, and each
// caller returns only once its job has run.
func TestArrivalsDuringARoundShareTheNext(t *testing.T) {
	var c Committer[int]
	var mu sync.Mutex
	var rounds [][]int
	ran := map[int]bool{}
	release := make(chan struct{})
	round := func(jobs []int) {
		if slices.Contains(jobs, 0) {
			<-release
		}
		mu.Lock()
		defer mu.Unlock()
		rounds = append(rounds, slices.Sorted(slices.Values(jobs)))
		for _, j := range jobs {
			ran[j] = true
		}
	}
	var wg sync.WaitGroup
	done := func(j int) {
		c.Do(j, round)
		mu.Lock()
		defer mu.Unlock()
		if !ran[j] {
			t.Errorf("job %d returned before it ran", j)
		}
	}
	wg.Go(func() { done(0) })
	for c.running0() {
		time.Sleep(time.Millisecond)
	}
	for j := 1; j <= 4; j++ {
		wg.Go(func() { done(j) })
	}
	for c.Queued() != 4 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if want := [][]int{{0}, {1, 2, 3, 4}}; !slices.EqualFunc(rounds, want, slices.Equal) {
		t.Fatalf("rounds %v, want %v", rounds, want)
	}
}

// running0 reports whether no round has started yet.
func (c *Committer[J]) running0() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.running
}
