/** The benchmark harness: runbus and its peers on the same workloads, in the same run. */
package dev.runbus.bench;
