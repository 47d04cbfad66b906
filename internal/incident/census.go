package incident

// Census is the cell's population by unit and attribute: how many
// allocations rack r7 holds, how many nodes, how many allocations run
// web@v2. A cause is judged against its share of it. The caller builds
// one from the state (live allocations and those that ended recently,
// nodes that are or were up, groups placed) and hands it to the engine
// with SetCensus; the engine only reads it.
type Census struct {
	total map[Unit]int
	count map[Unit]map[Attr]int
	keys  map[Unit]map[string]int // how many units carry each key at all
}

// NewCensus returns an empty census.
func NewCensus() *Census {
	return &Census{total: map[Unit]int{}, count: map[Unit]map[Attr]int{}, keys: map[Unit]map[string]int{}}
}

// Add counts one unit with its attributes.
func (c *Census) Add(u Unit, attrs ...Attr) {
	c.total[u]++
	if c.count[u] == nil {
		c.count[u], c.keys[u] = map[Attr]int{}, map[string]int{}
	}
	for _, a := range attrs {
		if a.Value == "" {
			continue
		}
		c.count[u][a]++
		c.keys[u][a.Key]++
	}
}

// Total is how many units of u the census holds.
func (c *Census) Total(u Unit) int {
	if c == nil {
		return 0
	}
	return c.total[u]
}

// Count is how many units of u carry a.
func (c *Census) Count(u Unit, a Attr) int {
	if c == nil {
		return 0
	}
	return c.count[u][a]
}

// carries reports whether any unit of u carries the key: a version is
// no attribute of nodes, so node signals say nothing for or against one.
func (c *Census) carries(u Unit, key string) bool {
	return c != nil && c.keys[u][key] > 0
}
