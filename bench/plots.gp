# SPDX-License-Identifier: MIT
# plots.gp: the benchmark plots, from the .dat files report.py writes.
#   gnuplot -e "dir='bench/results'; nsweep=8" bench/plots.gp
# nsweep: number of systems (columns after the first) in sweep.dat.
# Writes sweep, latency and overhead, each as PNG and SVG, into dir.

set datafile missing "NaN"
set encoding utf8
# Line colours in report.py's system order (weft's variants in purples and
# blues, then gomp, libomp, tbb, rayon); bars use the first three.
array colours[9] = ["#5e2b97", "#a17fd0", "#1f77b4", "#56b4e9", "#2ca02c", "#ff7f0e", \
                    "#d62728", "#000000", "#8c564b"]
do for [i=1:9] {
    set linetype i lc rgb colours[i] lw 2 pt i
}

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1000,600 font "sans,10"
    } else {
        set terminal svg size 1000,600 dynamic font "sans,10"
    }

    # CPU burned against the interval between sporadic jobs.
    reset
    set output dir."/sweep.".fmt
    set title "Sporadic 20 µs jobs from an outside thread, pool of 8: CPU burned"
    set logscale xy
    set xlabel "interval between jobs (µs)"
    set ylabel "CPU seconds per wall second"
    set key outside right top
    set grid
    set xrange [40:12000]
    plot for [i=2:nsweep+1] dir."/sweep.dat" using 1:i with linespoints lw 2 title columnheader(i), \
         20.0/x with lines dashtype 2 lc rgb "black" title "useful work"
    unset output

    # Submit-to-start latency percentiles of the sporadic workload.
    reset
    set output dir."/latency.".fmt
    set multiplot layout 1,2 title "Sporadic jobs: submit-to-start latency (log scale)"
    set style data histogram
    set style histogram cluster gap 1
    set style fill solid 0.8 border -1
    set logscale y
    set yrange [0.5:*]
    set ylabel "µs"
    set grid ytics
    set xtics rotate by -35
    set key top left autotitle columnhead
    set title "pool of 2"
    plot dir."/latency2.dat" using 2:xtic(1), "" using 3, "" using 4
    set title "pool of 8"
    plot dir."/latency8.dat" using 2:xtic(1), "" using 3, "" using 4
    unset multiplot
    unset output

    # Fork-join and loop overhead over the serial program.
    reset
    set output dir."/overhead.".fmt
    set multiplot layout 1,3 title "Time over the serial program (T1/Ts, T2/Ts; log scale; 1 = serial)"
    set style data histogram
    set style histogram cluster gap 1
    set style fill solid 0.8 border -1
    set logscale y
    set yrange [0.1:*]
    set grid ytics
    set xtics rotate by -35
    set key top left autotitle columnhead
    set title "fib30 (fork at every call)"
    plot dir."/overhead.dat" using 2:xtic(1) title "T1/Ts", "" using 3 title "T2/Ts", 1 with lines lc rgb "black" notitle
    set title "fib35 (fork at every call)"
    plot dir."/overhead.dat" using 4:xtic(1) title "T1/Ts", "" using 5 title "T2/Ts", 1 with lines lc rgb "black" notitle
    set title "loop (10^7 trivial iterations)"
    plot dir."/overhead.dat" using 6:xtic(1) title "T1/Ts", "" using 7 title "T2/Ts", 1 with lines lc rgb "black" notitle
    unset multiplot
    unset output
}
