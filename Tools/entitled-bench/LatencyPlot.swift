import Foundation

/// The latency distributions of both servers as an SVG chart: HdrHistogram's percentile spectrum, one
/// panel per scenario, the percentile axis stretched towards the tail (the x position is log10 of
/// 1 / (1 − percentile)) so p99, p99.9 and p99.99 are as far apart as p0, p90 and p99.
enum LatencyPlot {
    static func svg(_ report: ChecksReport) -> String {
        let panelWidth = 520.0
        let panelHeight = 300.0
        let margin = (left: 70.0, right: 20.0, top: 40.0, bottom: 50.0)
        let columns = min(2, max(1, report.scenarios.count))
        let rows = (report.scenarios.count + columns - 1) / columns
        let width = Double(columns) * (panelWidth + margin.left + margin.right)
        let height = Double(rows) * (panelHeight + margin.top + margin.bottom) + 30
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="20" font-size="14">entitled (blue) and Redis (red): latency by percentile, \(report.settings.mix.rawValue), \(report.settings.distribution.rawValue) keys, \(report.settings.users) users</text>

            """
        for (index, scenario) in report.scenarios.enumerated() {
            let originX = Double(index % columns) * (panelWidth + margin.left + margin.right) + margin.left
            let originY = Double(index / columns) * (panelHeight + margin.top + margin.bottom) + margin.top + 30
            let points = scenario.entitledSpectrum + scenario.redisSpectrum
            let top = niceCeiling(points.map(\.microseconds).max() ?? 1)
            let maxTail = log10(1 / (1 - 99.999 / 100))
            func x(_ percentile: Double) -> Double { originX + panelWidth * log10(1 / (1 - percentile / 100)) / maxTail }
            func y(_ microseconds: Double) -> Double { originY + panelHeight * (1 - microseconds / top) }
            svg += "<text x=\"\(originX)\" y=\"\(originY - 10)\">\(scenario.connections) connections, pipeline \(scenario.pipeline): "
            svg += "\(Int(scenario.entitledMedian.requestsPerSecond)) vs \(Int(scenario.redisMedian.requestsPerSecond)) req/s</text>\n"
            svg += "<rect x=\"\(originX)\" y=\"\(originY)\" width=\"\(panelWidth)\" height=\"\(panelHeight)\" fill=\"none\" stroke=\"#999\"/>\n"
            for step in 0...4 {
                let value = top * Double(step) / 4
                svg += "<line x1=\"\(originX)\" x2=\"\(originX + panelWidth)\" y1=\"\(y(value))\" y2=\"\(y(value))\" stroke=\"#eee\"/>"
                svg += "<text x=\"\(originX - 6)\" y=\"\(y(value) + 4)\" text-anchor=\"end\">\(Int(value)) µs</text>\n"
            }
            for percentile in [0.0, 90, 99, 99.9, 99.99, 99.999] {
                svg += "<line x1=\"\(x(percentile))\" x2=\"\(x(percentile))\" y1=\"\(originY)\" y2=\"\(originY + panelHeight)\" stroke=\"#eee\"/>"
                svg += "<text x=\"\(x(percentile))\" y=\"\(originY + panelHeight + 16)\" text-anchor=\"middle\">p\(Format.fixed(percentile, percentile == percentile.rounded() ? 0 : 3))</text>\n"
            }
            for (series, color) in [(scenario.entitledSpectrum, "#1f5fbf"), (scenario.redisSpectrum, "#c62828")] {
                let path = series.map { "\(Format.fixed(x($0.percentile), 1)),\(Format.fixed(y($0.microseconds), 1))" }
                svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(path.joined(separator: " "))\"/>\n"
            }
            svg += "<text x=\"\(originX + panelWidth / 2)\" y=\"\(originY + panelHeight + 36)\" text-anchor=\"middle\">percentile</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// 1, 2 or 5 times a power of ten, at least `value`: a round top for the latency axis.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let power = pow(10, floor(log10(value)))
        for factor in [1.0, 2, 5, 10] where factor * power >= value { return factor * power }
        return 10 * power
    }
}
