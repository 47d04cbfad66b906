package scheduler

// CurrentIndex is the index c keeps now, for the external tests.
func CurrentIndex(c *IndexCache) *NodeIndex { return c.current() }
