package server

import (
	"strconv"

	"github.com/hashicorp/go-memdb"
)

type watchSet = memdb.WatchSet

func itoa(i int) string { return strconv.Itoa(i) }
