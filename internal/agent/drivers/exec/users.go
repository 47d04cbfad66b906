package exec

import (
	"fmt"
	"os/user"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/internal/agent/drivers"
)

// DefaultUser is the user a task runs as when its spec names none.
const DefaultUser = "nobody"

// ErrRootNotAllowed is wrapped by StartTask for a task that would run as
// uid 0 or gid 0 where root tasks are not allowed (drivers.CheckRoot).
var ErrRootNotAllowed = drivers.ErrRootNotAllowed

// taskUser is the resolved identity a task runs as.
type taskUser struct {
	UID, GID int
}

// resolveUser turns a spec's user ("name", "uid", "name:group",
// "uid:gid") into ids on this node. A numeric uid need not exist in
// /etc/passwd; its group then defaults to the same number.
func resolveUser(spec string) (taskUser, error) {
	if spec == "" {
		spec = DefaultUser
	}
	name, group, hasGroup := strings.Cut(spec, ":")
	var u taskUser
	if n, err := strconv.Atoi(name); err == nil {
		u.UID, u.GID = n, n
		if pw, err := user.LookupId(name); err == nil {
			u.GID, _ = strconv.Atoi(pw.Gid)
		}
	} else {
		pw, err := user.Lookup(name)
		if err != nil {
			return u, fmt.Errorf("task user %q: %w", name, err)
		}
		u.UID, _ = strconv.Atoi(pw.Uid)
		u.GID, _ = strconv.Atoi(pw.Gid)
	}
	if hasGroup {
		if n, err := strconv.Atoi(group); err == nil {
			u.GID = n
		} else {
			gr, err := user.LookupGroup(group)
			if err != nil {
				return u, fmt.Errorf("task group %q: %w", group, err)
			}
			u.GID, _ = strconv.Atoi(gr.Gid)
		}
	}
	if u.UID < 0 || u.GID < 0 {
		return u, fmt.Errorf("task user %q: negative id", spec)
	}
	return u, nil
}

// ResolveUser is the uid and gid a task of spec's user runs as on this
// node (the default user when spec is empty): what the agent runs a
// task's exec health checks as, so a check never has more rights than
// its task.
func ResolveUser(spec string) (uid, gid int, err error) {
	u, err := resolveUser(spec)
	return u.UID, u.GID, err
}
