// ReplyStats, LabeledSlider, Banner, AccentButton and ModelRow.
import QtQuick
import QtTest
import ExlStudio

Item {
    id: root
    width: 800
    height: 400

    Component { id: statsComponent; ReplyStats {} }
    Component { id: sliderComponent; LabeledSlider { width: 400; from: 0; to: 8; stepSize: 1 } }
    Component { id: bannerComponent; Banner { width: 600 } }
    Component { id: buttonComponent; AccentButton { text: "Send" } }
    Component {
        id: rowComponent
        ModelRow {
            width: 600
            index: 0; name: "Llama-3-8B-exl2"; architecture: "LlamaForCausalLM"; parameters: 8.03e9; bpw: 4.25
            headBits: 6; sizeBytes: 5.1e9; nativeContext: 8192; loaded: true; remote: false; endpoint: ""; note: ""
        }
    }

    TestCase {
        name: "SmallComponents"
        when: windowShown

        function test_replyStats() {
            const s = createTemporaryObject(statsComponent, root, {})
            compare(s.text, "")
            s.stats = { generatedTokens: 12, timeToFirstTokenMs: 35.4, prefillTokensPerSecond: 900.2, decodeTokensPerSecond: 45.04 }
            compare(s.text, "12 token(s) · first token 35 ms · prefill 900 tok/s · decode 45.0 tok/s")
            s.stats = { generatedTokens: 1, timeToFirstTokenMs: 10, prefillTokensPerSecond: 1, decodeTokensPerSecond: 1, joulesPerToken: 0.456 }
            verify(s.text.indexOf("0.46 J/token") >= 0)
            verify(s.text.indexOf("drafts") < 0)
            s.stats = { generatedTokens: 20, timeToFirstTokenMs: 10, prefillTokensPerSecond: 1, decodeTokensPerSecond: 1,
                        draftedTokens: 30, acceptedDraftTokens: 12, acceptanceRate: 0.4, tokensPerPass: 1.6 }
            verify(s.text.indexOf("40 % of drafts accepted, 1.60 tokens per pass") >= 0)
            s.stopped = true
            verify(s.text.endsWith("stopped"))
        }

        function test_labeledSliderReportsMoves() {
            const s = createTemporaryObject(sliderComponent, root, { label: "Draft tokens", valueText: "4", value: 4 })
            const moved = createTemporaryObject(spyComponent, root, { target: s, signalName: "moved" })
            waitForRendering(s)
            mouseClick(s, s.width - 2, s.height - 8)  // the slider's right end
            compare(moved.count, 1)
            compare(moved.signalArguments[0][0], 8)
        }

        function test_bannerTones() {
            const b = createTemporaryObject(bannerComponent, root, { text: "Out of memory", tone: "error" })
            verify(Qt.colorEqual(b.color, "#c62828"))
            verify(b.implicitHeight > 0)
            b.tone = "warning"
            verify(Qt.colorEqual(b.color, "#f9a825"))
            b.visible = false
            compare(b.implicitHeight, 0)
        }

        function test_accentButtonClicksOnlyWhenEnabled() {
            const b = createTemporaryObject(buttonComponent, root, {})
            const clicked = createTemporaryObject(spyComponent, root, { target: b, signalName: "clicked" })
            waitForRendering(b)
            mouseClick(b)
            compare(clicked.count, 1)
            b.enabled = false
            mouseClick(b)
            compare(clicked.count, 1)
        }

        function test_modelRowSummary() {
            const r = createTemporaryObject(rowComponent, root, {})
            const activated = createTemporaryObject(spyComponent, root, { target: r, signalName: "activated" })
            waitForRendering(r)
            let found = false
            const want = "LlamaForCausalLM · 8.0B parameters · 4.25 bpw (head 6) · 5.1 GB · 8k context"
            function walk(item) {
                if (item.text === want) found = true
                for (let i = 0; i < item.children.length; ++i) walk(item.children[i])
            }
            walk(r)
            verify(found, "summary line")
            mouseClick(r)
            compare(activated.count, 1)
        }
    }

    Component { id: spyComponent; SignalSpy {} }
}
