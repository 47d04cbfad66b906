package server

import (
	"bytes"
	"io"
	"strconv"

	"github.com/hashicorp/go-memdb"
)

type watchSet = memdb.WatchSet

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func itoa(i int) string { return strconv.Itoa(i) }
