// Command loadtest runs a scripted SSH swarm against a snaked daemon.
package main

func main() {}
