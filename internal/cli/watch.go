package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

// watchWait is how long one blocking query of --watch waits for a change.
const watchWait = 5 * time.Minute

func addWatchFlag(cmd *cobra.Command, watch *bool, what string) {
	cmd.Flags().BoolVarP(watch, "watch", "w", false, "keep printing the "+what+" each time they change (blocking queries; Ctrl-C ends it)")
}

// watchEach fetches and prints once; with watch, it then prints again each
// time the data changes, until ctx ends or until (when set) says the data
// is final. fetch gets nil the first time and then a blocking query on the
// index it returned last. A table on a terminal is redrawn in place;
// elsewhere each change is printed after a line with its time, and json
// and yaml print one document per change.
func watchEach[T any](ctx context.Context, g *globals, watch bool, fetch func(context.Context, *api.Query) (T, uint64, error),
	print func(T) error, until func(T) bool) error {
	var index uint64
	for first := true; ; first = false {
		var q *api.Query
		if !first {
			q = &api.Query{Index: index, Wait: watchWait}
		}
		v, next, err := fetch(ctx, q)
		if err != nil {
			if !first && ctx.Err() != nil {
				return nil // interrupted while watching: done
			}
			return failf("%v", err)
		}
		if !first && next == index {
			continue // the wait ended without a change
		}
		index = next
		if !first && !g.structured() {
			if f, ok := g.stdout.(*os.File); ok && isTerminal(f) {
				fmt.Fprint(g.stdout, "\033[H\033[2J") // home, clear
			} else {
				fmt.Fprintln(g.stdout)
			}
			fmt.Fprintf(g.stdout, "%s (index %d)\n", time.Now().Format(time.TimeOnly), index)
		}
		if err := print(v); err != nil {
			return err
		}
		if !watch || (until != nil && until(v)) {
			return nil
		}
	}
}
