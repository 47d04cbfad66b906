//go:build !race

package anomaly

const raceDetector = false
