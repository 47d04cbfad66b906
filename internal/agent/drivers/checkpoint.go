package drivers

import "time"

// Checkpoint is what a driver wrote when it checkpointed a task.
type Checkpoint struct {
	Dir      string        // the image directory
	Bytes    int64         // total size of the image files
	Duration time.Duration // how long the task was frozen for the dump
}
