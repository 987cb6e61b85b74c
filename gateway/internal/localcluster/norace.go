//go:build !race

package localcluster

const raceEnabled = false
