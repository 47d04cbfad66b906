package drivers

import (
	"errors"
	"fmt"
	"slices"
)

// ErrRootNotAllowed is wrapped by a start refused because the task would
// run as root: uid 0, gid 0 or with group 0 among its groups, on a node
// that does not allow root tasks (agent flag --allow-root-tasks) or for
// a namespace that does not (TaskConfig.RootVeto).
var ErrRootNotAllowed = errors.New("root tasks are not allowed")

// CheckRoot applies the root policy to the ids a task would run as, as the
// node resolved them (never to the text of its user field: "00",
// "+0" and "65534:0" are root too). who names the user for the message
// (`task user "00"`, `the image's user`). Every driver calls it on the
// final ids, just before it starts the task.
func CheckRoot(who string, uid, gid int, groups []int, nodeAllows bool, veto string) error {
	if uid != 0 && gid != 0 && !slices.Contains(groups, 0) {
		return nil
	}
	switch {
	case veto != "":
		return fmt.Errorf("%s runs as uid %d, gid %d: %w here: %s", who, uid, gid, ErrRootNotAllowed, veto)
	case !nodeAllows:
		return fmt.Errorf("%s runs as uid %d, gid %d: %w on this node (agent flag --allow-root-tasks; or name another user in the task)", who, uid, gid, ErrRootNotAllowed)
	}
	return nil
}
