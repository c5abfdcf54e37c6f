// Package groupcommit runs the work of concurrent callers in rounds: while
// a round runs, the callers that arrive wait, and the next round takes all
// of them at once, so a cost paid per round (a directory sync, a
// statement's planning) is paid once for many callers.
package groupcommit

import "sync"

// Committer queues jobs and runs them in rounds. The zero value is ready
// to use; a Committer must not be copied after first use.
type Committer[J any] struct {
	mu      sync.Mutex
	cond    sync.Cond
	queue   []*entry[J]
	running bool
}

type entry[J any] struct {
	job  J
	done bool
}

// Do queues job and returns once a round has run it: round gets the jobs
// queued when it starts. Whoever is waiting when a round ends runs the
// next, so no caller runs rounds for others beyond its own.
func (c *Committer[J]) Do(job J, round func(jobs []J)) {
	e := &entry[J]{job: job}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cond.L == nil {
		c.cond.L = &c.mu
	}
	c.queue = append(c.queue, e)
	for !e.done {
		if c.running {
			c.cond.Wait()
			continue
		}
		c.running = true
		batch := c.queue
		c.queue = nil
		c.mu.Unlock()
		jobs := make([]J, len(batch))
		for i, b := range batch {
			jobs[i] = b.job
		}
		round(jobs)
		c.mu.Lock()
		for _, b := range batch {
			b.done = true
		}
		c.running = false
		c.cond.Broadcast()
	}
}

// Queued returns how many jobs wait for the next round.
func (c *Committer[J]) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}
