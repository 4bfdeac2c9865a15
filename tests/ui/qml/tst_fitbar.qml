// FitBar: the fit calculator's verdict, the largest context and the bar, from a planner estimate;
// the draft model's share when one is chosen.
import QtQuick
import QtTest
import ExlStudio

Item {
    width: 800
    height: 200

    Component {
        id: fitComponent
        FitBar { width: 800 }
    }

    TestCase {
        name: "FitBar"
        when: windowShown

        function estimate(fits) {
            return { available: true, fits: fits, deviceGiB: 24, usedGiB: fits ? 6 : 30, weightsGiB: fits ? 4 : 26,
                     cacheGiB: 1.5, scratchGiB: 0.5, freeGiB: fits ? 18 : 0, largestContext: 65536,
                     boundTokensPerSecond: 236.4, boundEmptyTokensPerSecond: 1250.2, contextLength: 4096, target: "" }
        }

        function test_noEstimateDisablesTheBar() {
            const bar = createTemporaryObject(fitComponent, parent, {})
            verify(bar)
            verify(!bar.enabled)
            compare(findChild(bar, "verdict").text, "No memory estimate for this model.")
            verify(!findChild(bar, "largest").visible)
        }

        function test_fits() {
            const bar = createTemporaryObject(fitComponent, parent, { fit: estimate(true) })
            verify(bar.enabled)
            compare(findChild(bar, "verdict").text, "Fits: 6.0 GiB of 24 GiB on the GPU.")
            compare(findChild(bar, "largest").text, "Largest context that fits: 65,536 tokens")
            compare(findChild(bar, "bound").text, "Bound decode speed: 1,250 tok/s at an empty context, 236 tok/s at 4,096 tokens")
            const weights = findChild(bar, "weightsBar")
            fuzzyCompare(weights.width, weights.parent.width * 4 / 24, 0.5)
        }

        function test_onCpuSaysSystemMemory() {
            const bar = createTemporaryObject(fitComponent, parent, { fit: estimate(true), onCpu: true })
            compare(findChild(bar, "verdict").text, "Fits: 6.0 GiB of 24 GiB on system memory.")
        }

        function test_draftModelShare() {
            // Without a draft model: no draft segment, no legend entry, no speculative line.
            const plain = createTemporaryObject(fitComponent, parent, { fit: estimate(true) })
            compare(findChild(plain, "draftBar").width, 0)
            verify(!findChild(plain, "legend_draftGiB").visible)
            verify(!findChild(plain, "speculative").visible)

            const fit = estimate(true)
            fit.draftGiB = 1.2
            fit.usedGiB = 7.2
            fit.speculativeTokensPerSecond = 410.6
            fit.speculativeAcceptance = 0.7
            const bar = createTemporaryObject(fitComponent, parent, { fit: fit })
            const draft = findChild(bar, "draftBar")
            fuzzyCompare(draft.width, draft.parent.width * 1.2 / 24, 0.5)
            const legend = findChild(bar, "legend_draftGiB")
            verify(legend.visible)
            compare(legend.children[1].text, "Draft model 1.2 GiB")
            compare(findChild(bar, "verdict").text, "Fits: 7.2 GiB of 24 GiB on the GPU.")
            compare(findChild(bar, "speculative").text, "With the draft model: about 411 tok/s if 70 % of drafted tokens are accepted")
        }

        function named(item, name, out) {
            for (let i = 0; i < item.children.length; ++i) {
                const c = item.children[i]
                if (c.objectName === name && c.visible)
                    out.push(c)
                named(c, name, out)
            }
            return out
        }

        function test_splitListsEachGpu() {
            verify(named(createTemporaryObject(fitComponent, parent, { fit: estimate(true) }), "splitDevice", []).length === 0)
            const fit = estimate(true)
            fit.devices = [
                { index: 0, name: "RTX 4090", firstLayer: 0, lastLayer: 37, head: false, draft: false, usedGiB: 20.31, totalGiB: 24, fits: true },
                { index: 1, name: "RTX 4090", firstLayer: 38, lastLayer: 79, head: true, draft: true, usedGiB: 25.5, totalGiB: 24, fits: false }]
            const bar = createTemporaryObject(fitComponent, parent, { fit: fit })
            const lines = named(bar, "splitDevice", [])
            compare(lines.length, 2)
            compare(lines[0].text, "GPU 0 (RTX 4090): layers 0–37, 20.3 GiB of 24 GiB")
            compare(lines[1].text, "GPU 1 (RTX 4090): layers 38–79, 25.5 GiB of 24 GiB, the head, the draft model")
            verify(Qt.colorEqual(lines[1].color, "#c62828"))
        }

        function test_doesNotFit() {
            const bar = createTemporaryObject(fitComponent, parent, { fit: estimate(false) })
            compare(findChild(bar, "verdict").text, "Does not fit: needs 30.0 GiB of 24 GiB.")
            // Over the device: the bar is scaled to what is needed, so it never overflows.
            const weights = findChild(bar, "weightsBar")
            fuzzyCompare(weights.width, weights.parent.width * 26 / 30, 0.5)
        }
    }
}
