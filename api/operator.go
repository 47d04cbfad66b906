package api

// RaftServer is one server of the cell's raft configuration.
type RaftServer struct {
	ID      string `json:"id"`
	Address string `json:"address"` // its server port (--raft-addr)
	Voter   bool   `json:"voter"`
	Leader  bool   `json:"leader"`
}

// RaftConfiguration is the cell's raft configuration as its leader knows it.
type RaftConfiguration struct {
	Servers []RaftServer `json:"servers"`
	// Index is the raft index of the configuration's last change.
	Index uint64 `json:"index"`
}

// RemovePeerResponse answers a remove-peer.
type RemovePeerResponse struct {
	Removed RaftServer `json:"removed"`
}

// SnapshotInfo describes a state snapshot saved or restored.
type SnapshotInfo struct {
	// Index is the state index the snapshot was taken at.
	Index uint64 `json:"index"`
	// Bytes is the size of the state in the snapshot.
	Bytes int64 `json:"bytes"`
	// SHA256 is the checksum of the state in the snapshot.
	SHA256 string `json:"sha256"`
}
