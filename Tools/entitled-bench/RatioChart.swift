import Foundation

/// entitled against Redis at a glance, as an SVG chart: for each load (connections × pipeline) a bar of
/// entitled's throughput over Redis's (above 1: faster) and a bar of its server CPU time per request over
/// Redis's (below 1: cheaper), around a line at 1.0 (level with Redis).
enum RatioChart {
    static func svg(_ report: ChecksReport) -> String {
        let scenarios = report.scenarios
        let groupWidth = 150.0
        let plotHeight = 260.0
        let margin = (left: 60.0, right: 190.0, top: 56.0, bottom: 60.0)
        let width = margin.left + Double(max(1, scenarios.count)) * groupWidth + margin.right
        let height = margin.top + plotHeight + margin.bottom
        let ratios = scenarios.flatMap { [$0.throughputRatio] + ($0.serverCPURatio.map { [$0] } ?? []) }
        let top = max(1.5, ((ratios.max() ?? 1) * 1.15 * 4).rounded(.up) / 4)
        func y(_ ratio: Double) -> Double { margin.top + plotHeight * (1 - ratio / top) }
        let colors = (throughput: "#1f5fbf", cpu: "#e08a00")

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="20" font-size="14">entitled over Redis, per load (\(report.settings.mix.rawValue), \(report.settings.distribution.rawValue) keys, \(Format.grouped(Double(report.settings.users))) users, medians of \(report.settings.runs) runs)</text>
            <text x="10" y="38" fill="#555">\(report.machine.cpus) cores, \(escape(report.machine.kernel)); \(escape(report.settings.redisVersion.split(separator: " ").prefix(2).joined(separator: " ")))</text>

            """
        var step = 0.0
        while step <= top + 1e-9 {
            svg += "<line x1=\"\(margin.left)\" x2=\"\(width - margin.right)\" y1=\"\(f(y(step)))\" y2=\"\(f(y(step)))\" stroke=\"#eee\"/>"
            svg += "<text x=\"\(margin.left - 6)\" y=\"\(f(y(step) + 4))\" text-anchor=\"end\">\(Format.fixed(step, 2))×</text>\n"
            step += 0.25
        }
        svg += "<line x1=\"\(margin.left)\" x2=\"\(width - margin.right)\" y1=\"\(f(y(1)))\" y2=\"\(f(y(1)))\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>\n"
        for (index, scenario) in scenarios.enumerated() {
            let left = margin.left + Double(index) * groupWidth + 25
            let bars: [(Double?, String)] = [(scenario.throughputRatio, colors.throughput), (scenario.serverCPURatio, colors.cpu)]
            for (offset, bar) in bars.enumerated() {
                guard let ratio = bar.0 else { continue }
                let x = left + Double(offset) * 50
                svg += "<rect x=\"\(f(x))\" y=\"\(f(y(ratio)))\" width=\"44\" height=\"\(f(y(0) - y(ratio)))\" fill=\"\(bar.1)\"/>"
                svg += "<text x=\"\(f(x + 22))\" y=\"\(f(y(ratio) - 4))\" text-anchor=\"middle\">\(Format.fixed(ratio, 2))×</text>\n"
            }
            svg += "<text x=\"\(f(left + 47))\" y=\"\(f(y(0) + 18))\" text-anchor=\"middle\">\(scenario.connections) conn × \(scenario.pipeline)</text>\n"
            let rates = "\(Format.grouped(scenario.entitledMedian.requestsPerSecond)) / \(Format.grouped(scenario.redisMedian.requestsPerSecond))"
            svg += "<text x=\"\(f(left + 47))\" y=\"\(f(y(0) + 34))\" text-anchor=\"middle\" fill=\"#555\" font-size=\"10\">\(rates) req/s</text>\n"
        }
        let legendX = width - margin.right + 16
        let legend = [(colors.throughput, "throughput ratio", "above 1: entitled faster"), (colors.cpu, "server CPU per request", "below 1: entitled cheaper")]
        for (index, (color, name, reading)) in legend.enumerated() {
            let top = margin.top + 40 * Double(index)
            svg += "<rect x=\"\(f(legendX))\" y=\"\(f(top))\" width=\"12\" height=\"12\" fill=\"\(color)\"/>"
            svg += "<text x=\"\(f(legendX + 18))\" y=\"\(f(top + 10))\">\(name)</text>"
            svg += "<text x=\"\(f(legendX + 18))\" y=\"\(f(top + 24))\" fill=\"#555\" font-size=\"10\">\(reading)</text>\n"
        }
        return svg + "</svg>\n"
    }

    private static func f(_ value: Double) -> String { Format.fixed(value, 1) }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
