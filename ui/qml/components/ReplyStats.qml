// The statistics line under a reply: tokens, time to first token, prefill and decode speed, the
// share of drafted tokens accepted (speculative decoding), and
// the GPU energy per token where NVML reports it; and why the reply ended early (stopped, the token
// limit, a full context).
import QtQuick
import QtQuick.Controls

Label {
    property var stats: ({})
    property bool stopped: false

    opacity: 0.65
    wrapMode: Text.Wrap
    font.pointSize: Math.max(7, (ApplicationWindow.window ? ApplicationWindow.window.font.pointSize : 11) - 2)
    text: {
        const parts = []
        if (stats && stats.generatedTokens !== undefined) {
            parts.push(qsTr("%n token(s)", "", stats.generatedTokens))
            parts.push(qsTr("first token %1 ms").arg(Math.round(stats.timeToFirstTokenMs)))
            parts.push(qsTr("prefill %1 tok/s").arg(Math.round(stats.prefillTokensPerSecond)))
            parts.push(qsTr("decode %1 tok/s").arg(stats.decodeTokensPerSecond.toFixed(1)))
            if (stats.draftedTokens !== undefined)
                parts.push(qsTr("%1 % of drafts accepted, %2 tokens per pass")
                           .arg(Math.round(100 * stats.acceptanceRate)).arg(stats.tokensPerPass.toFixed(2)))
            if (stats.joulesPerToken !== undefined)
                parts.push(qsTr("%1 J/token").arg(stats.joulesPerToken.toFixed(2)))
        }
        if (stopped)
            parts.push(qsTr("stopped"))
        else if (stats && stats.stopReason === "length")
            parts.push(qsTr("ended at the token limit (Settings → Sampling → Max reply tokens)"))
        else if (stats && stats.stopReason === "context")
            parts.push(qsTr("ended: the context is full"))
        return parts.join(" · ")
    }
}
