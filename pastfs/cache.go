package pastfs

import (
	"container/list"
	"sync"
)

// contentCache keeps the content of the files read last, up to a total
// size: a file is read in many requests, and its source gives it whole.
type contentCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // of *cached, most recent first
	by    map[*fileNode]*list.Element
}

type cached struct {
	node *fileNode
	data []byte
}

func newContentCache(max int) *contentCache {
	return &contentCache{max: max, order: list.New(), by: map[*fileNode]*list.Element{}}
}

// get returns n's content, reading it with read when it is not cached.
func (c *contentCache) get(n *fileNode, read func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	if e, ok := c.by[n]; ok {
		c.order.MoveToFront(e)
		data := e.Value.(*cached).data
		c.mu.Unlock()
		return data, nil
	}
	c.mu.Unlock()
	data, err := read()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.by[n]; !ok && len(data) <= c.max {
		c.by[n] = c.order.PushFront(&cached{n, data})
		c.size += len(data)
		for c.size > c.max {
			last := c.order.Back()
			old := last.Value.(*cached)
			c.order.Remove(last)
			delete(c.by, old.node)
			c.size -= len(old.data)
		}
	}
	return data, nil
}
