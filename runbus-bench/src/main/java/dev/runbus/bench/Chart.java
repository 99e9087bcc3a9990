package dev.runbus.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Paint;
import java.io.IOException;
import java.text.DecimalFormat;
import java.text.NumberFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;

/** Draws the report's charts as PNG with JFreeChart, headless. */
final class Chart {

    private static final int WIDTH = 1200;
    private static final int HEIGHT = 560;
    private static final Paint[] COLORS = {
        new Color(0xD6, 0x45, 0x1E), // runbus
        new Color(0x3B, 0x6E, 0xA8),
        new Color(0x5F, 0xA0, 0x55),
        new Color(0x8E, 0x6B, 0xB5),
        new Color(0x9A, 0x9A, 0x9A),
    };

    private Chart() {
    }

    /** Writes the charts there is data for; returns chart name → file name (next to {@code report}). */
    static Map<String, String> writeAll(Results r, java.nio.file.Path report) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Map<String, String> files = new LinkedHashMap<>();
        String base = report.getFileName().toString().replaceFirst("\\.md$", "");
        java.nio.file.Path dir = report.toAbsolutePath().getParent();
        java.nio.file.Files.createDirectories(dir);
        if (r.drain != null) {
            String name = base + "-drain.png";
            ChartUtils.saveChartAsPNG(dir.resolve(name).toFile(), drain(r.drain, r.repeats), WIDTH, HEIGHT);
            files.put("drain", name);
        }
        if (r.latency != null) {
            String name = base + "-latency.png";
            ChartUtils.saveChartAsPNG(dir.resolve(name).toFile(), latency(r.latency, r.repeats), WIDTH, HEIGHT);
            files.put("latency", name);
        }
        return files;
    }

    static JFreeChart drain(DrainScenario.Result d, int rounds) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (String name : d.rates().keySet()) {
            for (int c : d.consumerCounts()) {
                if (d.has(name, c)) {
                    data.addValue(Stats.of(d.of(name, c)).median() / 1000.0, name, "C = " + c + " consumers");
                }
            }
        }
        JFreeChart chart = ChartFactory.createBarChart("Drain: " + String.format(Locale.ROOT, "%,d", d.messages())
                        + " messages of " + Payloads.SIZE + " B, no-op handler, first publish to last ack",
                null, "thousand messages per second", data, PlotOrientation.VERTICAL, true, false, false);
        subtitle(chart, "median of " + rounds + " round(s), same run, same Redis; higher is better");
        CategoryPlot plot = style(chart);
        BarRenderer renderer = (BarRenderer) plot.getRenderer();
        labels(renderer, new DecimalFormat("0"));
        ((NumberAxis) plot.getRangeAxis()).setUpperMargin(0.12);
        return chart;
    }

    static JFreeChart latency(LatencyScenario.Result l, int rounds) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        double min = Double.MAX_VALUE;
        double max = 0;
        for (String name : l.contenders()) {
            for (int rate : l.rates()) {
                String at = String.format(Locale.ROOT, " at %,d/s", rate);
                double[] v = {
                    Stats.of(l.values(rate, name, LatencyScenario.Sample::p50)).median(),
                    Stats.of(l.values(rate, name, LatencyScenario.Sample::p99)).median(),
                    Stats.of(l.values(rate, name, LatencyScenario.Sample::p999)).median(),
                };
                String[] label = {"p50", "p99", "p99.9"};
                for (int i = 0; i < v.length; i++) {
                    data.addValue(Double.isNaN(v[i]) ? null : v[i], name, label[i] + at);
                    if (!Double.isNaN(v[i])) {
                        min = Math.min(min, v[i]);
                        max = Math.max(max, v[i]);
                    }
                }
            }
        }
        JFreeChart chart = ChartFactory.createBarChart("Latency: enqueue to confirmed ack, fixed offered rate, "
                + l.consumers() + " consumers", null, "milliseconds (log scale)", data, PlotOrientation.VERTICAL,
                true, false, false);
        subtitle(chart, "median of " + rounds + " round(s), same run, same Redis; lower is better");
        CategoryPlot plot = style(chart);
        LogAxis axis = new LogAxis("milliseconds (log scale)");
        axis.setBase(10);
        axis.setNumberFormatOverride(new DecimalFormat("0.###"));
        axis.setTickUnit(new NumberTickUnit(1)); // one tick per decade: 0.1, 1, 10, 100 ms
        axis.setMinorTickCount(9);
        axis.setMinorTickMarksVisible(true);
        double lower = min == Double.MAX_VALUE ? 0.01 : Math.pow(10, Math.floor(Math.log10(min))) / 1.25;
        double upper = max == 0 ? 10 : Math.pow(10, Math.ceil(Math.log10(max * 1.5)));
        axis.setRange(lower, upper);
        axis.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        axis.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        plot.setRangeAxis(axis);
        BarRenderer renderer = (BarRenderer) plot.getRenderer();
        renderer.setBase(lower);
        labels(renderer, new ThreeDigits());
        return chart;
    }

    /** Bar labels with about three significant digits, as the report writes milliseconds. */
    private static final class ThreeDigits extends NumberFormat {
        private static final long serialVersionUID = 1L;

        @Override
        public StringBuffer format(double number, StringBuffer to, java.text.FieldPosition pos) {
            return to.append(Fmt.ms(number));
        }

        @Override
        public StringBuffer format(long number, StringBuffer to, java.text.FieldPosition pos) {
            return to.append(number);
        }

        @Override
        public Number parse(String source, java.text.ParsePosition pos) {
            throw new UnsupportedOperationException();
        }
    }

    private static void subtitle(JFreeChart chart, String text) {
        chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 17));
        TextTitle sub = new TextTitle(text, new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        chart.addSubtitle(sub);
    }

    private static CategoryPlot style(JFreeChart chart) {
        chart.setBackgroundPaint(Color.WHITE);
        chart.getLegend().setPosition(RectangleEdge.BOTTOM);
        chart.getLegend().setItemFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(new Color(0xDD, 0xDD, 0xDD));
        plot.setRangeGridlineStroke(new BasicStroke(1f));
        plot.setOutlineVisible(false);
        CategoryAxis domain = plot.getDomainAxis();
        domain.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        domain.setCategoryMargin(0.15);
        plot.getRangeAxis().setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        plot.getRangeAxis().setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        BarRenderer renderer = (BarRenderer) plot.getRenderer();
        renderer.setBarPainter(new StandardBarPainter());
        renderer.setShadowVisible(false);
        renderer.setItemMargin(0.04);
        for (int i = 0; i < COLORS.length; i++) {
            renderer.setSeriesPaint(i, COLORS[i]);
        }
        return plot;
    }

    private static void labels(BarRenderer renderer, NumberFormat format) {
        renderer.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}", format));
        renderer.setDefaultItemLabelsVisible(true);
        renderer.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
        renderer.setDefaultPositiveItemLabelPosition(new ItemLabelPosition(ItemLabelAnchor.OUTSIDE12,
                TextAnchor.BOTTOM_CENTER));
    }
}
