/* vk_roundtrip: the floor of one submit + wait on the first Vulkan device, raw Vulkan, no kp.

   For an empty command buffer and for one that fills a device buffer (a ~260 µs transfer on an
   H100 at the default 768 MiB, timestamps around it), each way of waiting for the submit: a
   reused fence waited for in vkWaitForFences (blocking), or polled with vkGetFenceStatus and
   sched_yield between polls (kp patch 0008's way), a pause instruction between polls, or nothing
   between polls; a timeline semaphore (Vulkan 1.2) polled with vkGetSemaphoreCounterValue or
   waited for in vkWaitSemaphores; a flag in host memory that the command buffer writes last
   (vkCmdFillBuffer after a barrier), polled by the host, the fence waited for after it. Per call:
   vkResetFences (fence ways), vkQueueSubmit, the wait, and the whole call less the fill's device
   time ("overhead": what the host adds to the work); where the device has
   VK_EXT_calibrated_timestamps, that overhead split: from the submit's start to the fill's first
   timestamp ("start"), and from its last to the wait's end ("end"), on the host's clock.
   Two more ways submit the command buffer before the call, held on the device until the call
   releases it from the host: by vkSetEvent (the command buffer begins with vkCmdWaitEvents) or by
   vkSignalSemaphore (its submit waits for a timeline value the host signals); their "submit" is
   that release. Every call follows a 20 µs busy gap on the host (where a library's Python would
   run), the held submit made before the gap.
   The ways are interleaved, --rounds rounds of reps calls each; medians of all calls, µs.

   With a SPIR-V file of vk_roundtrip_mul.comp (c = a * b) and VK_EXT_conditional_rendering, the
   same for one dispatch of it over 2^log2n floats in device memory: submitted and waited for
   (fence polled), against submitted before and held by an event as above: the event alone; with
   a barrier from the host's writes to the shader's reads; the dispatch inside a conditional-
   rendering block whose predicate (host memory) the host writes before it sets the event, without
   and with that barrier; an indirect dispatch whose group counts the host writes (0: nothing
   runs). The last two can be cancelled: predicate 0, or no groups ("cancelled": what a wrong
   guess costs). A check on small host-visible buffers first: cancelled leaves c as it was, go
   writes a*b. Last, a library's pattern: two held command buffers (indirect dispatches) taking
   turns, the next one held while the released one runs (before its wait) or after its wait,
   and held before the wait with each command buffer on a queue of its own, against a plain submit (not on CPU devices: on lavapipe the first held wait never ended).
   Every dispatch way resets its timestamp queries after its start (after the event wait where
   there is one), so that each pays the reset between its start and the work.

   Build: gcc -O2 benchmarks/vk_roundtrip.c -lvulkan -o vk_roundtrip
          glslangValidator -V benchmarks/vk_roundtrip_mul.comp -o vk_roundtrip_mul.spv
   Run:   ./vk_roundtrip [reps=200] [rounds=5] [fill_mib=768] [mul.spv] [log2n=26] [gap_us=20]
          (gap_us: the dispatch section's busy gap on the host before each call)             */
#include <vulkan/vulkan.h>
#include <immintrin.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { VkResult r_ = (x); if (r_ != VK_SUCCESS) { fprintf(stderr, "%s -> %d\n", #x, r_); exit(1); } } while (0)
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(double *v, int n) { qsort(v, n, sizeof(double), cmp); return n ? v[n / 2] : 0; }

enum { BLOCK, YIELD, PAUSE, SPIN, FLAG, EVENT, TL_POLL, TL_WAIT, TL_GATE, NWAYS };
static const char *NAMES[NWAYS] = {"fence, vkWaitForFences", "fence, poll + sched_yield",
                                   "fence, poll + pause", "fence, poll", "host flag, then fence",
                                   "submitted before, vkSetEvent", "timeline, poll",
                                   "timeline, vkWaitSemaphores", "submitted before, host signal"};

static uint32_t memory_type(VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, VkMemoryPropertyFlags want,
                            VkMemoryPropertyFlags prefer, VkMemoryPropertyFlags avoid) {
    int best = -1, score = -1;
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
        if (!(bits >> i & 1) || (f & want) != want) continue;
        int sc = ((f & prefer) == prefer) * 2 + !(f & avoid);
        if (sc > score) { score = sc; best = (int)i; }
    }
    if (best < 0) { fprintf(stderr, "no memory type\n"); exit(1); }
    return (uint32_t)best;
}

typedef struct { VkBuffer buf; VkDeviceMemory mem; void *map; } Buf;
static Buf make_buffer(VkDevice dev, VkPhysicalDeviceMemoryProperties *mp, VkDeviceSize size, VkBufferUsageFlags usage, int host) {
    Buf b = {0};
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO}; bci.size = size; bci.usage = usage;
    CK(vkCreateBuffer(dev, &bci, 0, &b.buf));
    VkMemoryRequirements mr; vkGetBufferMemoryRequirements(dev, b.buf, &mr);
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO}; mai.allocationSize = mr.size;
    mai.memoryTypeIndex = host ? memory_type(mp, mr.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0, 0)
                               : memory_type(mp, mr.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    CK(vkAllocateMemory(dev, &mai, 0, &b.mem)); CK(vkBindBufferMemory(dev, b.buf, b.mem, 0));
    if (host) CK(vkMapMemory(dev, b.mem, 0, VK_WHOLE_SIZE, 0, &b.map));
    return b;
}

/* one dispatch of c = a * b: submitted and waited for, or held by an event and released (go or cancelled) */
static double gap_us = 20;     /* the host's busy gap before each call */

static void dispatches(VkDevice dev, VkPhysicalDevice pd, VkPhysicalDeviceProperties *pp, VkQueue q, VkQueue q2, uint32_t qi,
                       const char *spv_path, int log2n, int reps, int rounds, VkQueryPool qp,
                       PFN_vkGetCalibratedTimestampsEXT calib, VkCalibratedTimestampInfoEXT *cti) {
    FILE *f = fopen(spv_path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", spv_path); exit(1); }
    static uint32_t code[1 << 16]; size_t len = fread(code, 1, sizeof code, f); fclose(f);
    PFN_vkCmdBeginConditionalRenderingEXT begin_cond = (PFN_vkCmdBeginConditionalRenderingEXT)vkGetDeviceProcAddr(dev, "vkCmdBeginConditionalRenderingEXT");
    PFN_vkCmdEndConditionalRenderingEXT end_cond = (PFN_vkCmdEndConditionalRenderingEXT)vkGetDeviceProcAddr(dev, "vkCmdEndConditionalRenderingEXT");
    VkPhysicalDeviceMemoryProperties mp; vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    VkShaderModuleCreateInfo smi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO}; smi.codeSize = len; smi.pCode = code;
    VkShaderModule sm; CK(vkCreateShaderModule(dev, &smi, 0, &sm));
    VkDescriptorSetLayoutBinding lb[3];
    for (int i = 0; i < 3; i++) { VkDescriptorSetLayoutBinding x = {(uint32_t)i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, 0}; lb[i] = x; }
    VkDescriptorSetLayoutCreateInfo dli = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO}; dli.bindingCount = 3; dli.pBindings = lb;
    VkDescriptorSetLayout dsl; CK(vkCreateDescriptorSetLayout(dev, &dli, 0, &dsl));
    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO}; pli.setLayoutCount = 1; pli.pSetLayouts = &dsl;
    pli.pushConstantRangeCount = 1; pli.pPushConstantRanges = &pcr;
    VkPipelineLayout pl; CK(vkCreatePipelineLayout(dev, &pli, 0, &pl));
    VkComputePipelineCreateInfo cpci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO; cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpci.stage.module = sm; cpci.stage.pName = "main"; cpci.layout = pl;
    VkPipeline pipe; CK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, 0, &pipe));
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 6};
    VkDescriptorPoolCreateInfo dpi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO}; dpi.maxSets = 2; dpi.poolSizeCount = 1; dpi.pPoolSizes = &ps;
    VkDescriptorPool dp; CK(vkCreateDescriptorPool(dev, &dpi, 0, &dp));
    VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO}; cpi.queueFamilyIndex = qi;
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    VkCommandPool pool; CK(vkCreateCommandPool(dev, &cpi, 0, &pool));
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO}; VkFence fence; CK(vkCreateFence(dev, &fci, 0, &fence));
    VkEventCreateInfo eci = {VK_STRUCTURE_TYPE_EVENT_CREATE_INFO}; VkEvent event; CK(vkCreateEvent(dev, &eci, 0, &event));
    Buf pred = make_buffer(dev, &mp, 256, VK_BUFFER_USAGE_CONDITIONAL_RENDERING_BIT_EXT, 1);
    volatile uint32_t *go = pred.map;
    VkBufferUsageFlags su = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    /* [small host-visible check, the timed size in device memory] */
    for (int pass = 0; pass < 2; pass++) {
        uint32_t n = pass ? 1u << log2n : 4096u;
        Buf a = make_buffer(dev, &mp, 4ull * n, su, !pass), b = make_buffer(dev, &mp, 4ull * n, su, !pass), c = make_buffer(dev, &mp, 4ull * n, su, !pass);
        if (!pass) for (uint32_t i = 0; i < n; i++) { ((float *)a.map)[i] = (float)i; ((float *)b.map)[i] = 0.5f; ((float *)c.map)[i] = -1.0f; }
        VkDescriptorSetAllocateInfo dsa = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO}; dsa.descriptorPool = dp; dsa.descriptorSetCount = 1; dsa.pSetLayouts = &dsl;
        VkDescriptorSet ds; CK(vkAllocateDescriptorSets(dev, &dsa, &ds));
        VkDescriptorBufferInfo dbi[3] = {{a.buf, 0, VK_WHOLE_SIZE}, {b.buf, 0, VK_WHOLE_SIZE}, {c.buf, 0, VK_WHOLE_SIZE}};
        VkWriteDescriptorSet wr = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET}; wr.dstSet = ds; wr.descriptorCount = 3;
        wr.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER; wr.pBufferInfo = dbi;
        vkUpdateDescriptorSets(dev, 1, &wr, 0, 0);
        /* the ways: how each command buffer is held and what the host's release decides */
        enum { PLAIN, EV, EV_BARRIER, EV_COND, EV_COND_BARRIER, EV_INDIRECT, NW };
        static const char *wn[NW] = {"submitted, fence polled", "held: event", "held: event + host barrier",
                                     "held: event + predicate", "held: predicate + barrier", "held: indirect dispatch"};
        VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO}; cai.commandPool = pool; cai.commandBufferCount = NW;
        VkCommandBuffer cbs[NW]; CK(vkAllocateCommandBuffers(dev, &cai, cbs));
        uint32_t n4 = n / 4, groups = n4 / 256 < 8192 ? (n4 + 255) / 256 : 8192;
        for (int k = 0; k < NW; k++) {
            VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            CK(vkBeginCommandBuffer(cbs[k], &bi));
            int cond = k == EV_COND || k == EV_COND_BARRIER;
            if (k != PLAIN) {
                VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER}; mb.srcAccessMask = VK_ACCESS_HOST_WRITE_BIT;
                VkPipelineStageFlags dst = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
                if (cond) { dst |= VK_PIPELINE_STAGE_CONDITIONAL_RENDERING_BIT_EXT; mb.dstAccessMask |= VK_ACCESS_CONDITIONAL_RENDERING_READ_BIT_EXT; }
                if (k == EV_INDIRECT) { dst |= VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT; mb.dstAccessMask |= VK_ACCESS_INDIRECT_COMMAND_READ_BIT; }
                if (k == EV_BARRIER || k == EV_COND_BARRIER) mb.dstAccessMask |= VK_ACCESS_SHADER_READ_BIT;
                vkCmdWaitEvents(cbs[k], 1, &event, VK_PIPELINE_STAGE_HOST_BIT, dst, mb.dstAccessMask ? 1 : 0, &mb, 0, 0, 0, 0);
            }
            /* (the queries' reset after the wait: every way pays it between its start and the work) */
            vkCmdResetQueryPool(cbs[k], qp, 0, 2);
            vkCmdWriteTimestamp(cbs[k], VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
            if (cond) { VkConditionalRenderingBeginInfoEXT cbi = {VK_STRUCTURE_TYPE_CONDITIONAL_RENDERING_BEGIN_INFO_EXT}; cbi.buffer = pred.buf; begin_cond(cbs[k], &cbi); }
            vkCmdBindPipeline(cbs[k], VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
            vkCmdBindDescriptorSets(cbs[k], VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &ds, 0, 0);
            vkCmdPushConstants(cbs[k], pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &n4);
            if (k == EV_INDIRECT) vkCmdDispatchIndirect(cbs[k], pred.buf, 16);
            else vkCmdDispatch(cbs[k], groups, 1, 1);
            if (cond) end_cond(cbs[k]);
            vkCmdWriteTimestamp(cbs[k], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1);
            CK(vkEndCommandBuffer(cbs[k]));
        }
        /* the host's decision: the predicate (word 0) and the indirect group counts (words 4-6) */
#define DECIDE(yes) do { go[0] = (yes); go[4] = (yes) ? groups : 0; go[5] = go[6] = 1; } while (0)
        if (!pass) {   /* the check: cancelled leaves c alone, go writes it */
            for (int w = EV_COND; w <= EV_INDIRECT; w += EV_INDIRECT - EV_COND) for (int yes = 0; yes < 2; yes++) {
                VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO}; si.commandBufferCount = 1; si.pCommandBuffers = &cbs[w];
                for (uint32_t i = 0; i < n; i++) ((float *)c.map)[i] = -1.0f;
                CK(vkResetEvent(dev, event)); CK(vkResetFences(dev, 1, &fence)); CK(vkQueueSubmit(q, 1, &si, fence));
                DECIDE(yes); CK(vkSetEvent(dev, event));
                CK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
                int bad = 0;
                for (uint32_t i = 0; i < n; i++) bad += ((float *)c.map)[i] != (yes ? 0.5f * (float)i : -1.0f);
                printf("dispatch check, %s, %s: %s\n", wn[w], yes ? "go" : "cancelled", bad ? "WRONG" : "right");
            }
            continue;
        }
        size_t cap = (size_t)reps * rounds, cnt[2][NW] = {{0}};
        double *t[2][NW][4];     /* [cancelled, go][way][release, call, device, start] */
        for (int y = 0; y < 2; y++) for (int w = 0; w < NW; w++) for (int k = 0; k < 4; k++) t[y][w][k] = calloc(cap, sizeof(double));
        for (int r = -1; r < rounds; r++) {
            uint64_t ts2[2], dmax; double dev0 = 0, host0 = 0;
            if (calib) { CK(calib(dev, 2, cti, ts2, &dmax)); dev0 = (double)ts2[0] * pp->limits.timestampPeriod * 1e-3; host0 = (double)ts2[1] * 1e-3; }
            for (int w0 = 0; w0 < 2 * NW; w0++) {
                int w = (w0 / 2 + (r < 0 ? 0 : r)) % NW, yes = w0 % 2;
                if (!yes && w < EV_COND) continue;       /* (only a predicate or indirect counts can cancel) */
                VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO}; si.commandBufferCount = 1; si.pCommandBuffers = &cbs[w];
                for (int i = 0; i < (r < 0 ? 20 : reps); i++) {
                    if (w != PLAIN) { CK(vkResetEvent(dev, event)); CK(vkResetFences(dev, 1, &fence)); CK(vkQueueSubmit(q, 1, &si, fence)); }
                    for (double g = now_us(); now_us() - g < gap_us;) {}
                    double t0 = now_us();
                    if (w == PLAIN) { CK(vkResetFences(dev, 1, &fence)); CK(vkQueueSubmit(q, 1, &si, fence)); }
                    else { DECIDE(yes); CK(vkSetEvent(dev, event)); }
                    double t1 = now_us();
                    VkResult res; while ((res = vkGetFenceStatus(dev, fence)) == VK_NOT_READY) {} CK(res);
                    double t2 = now_us();
                    uint64_t ts[2]; CK(vkGetQueryPoolResults(dev, qp, 0, 2, sizeof ts, ts, 8, VK_QUERY_RESULT_64_BIT));
                    double d0 = (double)ts[0] * pp->limits.timestampPeriod * 1e-3 - dev0 + host0;
                    double d1 = (double)ts[1] * pp->limits.timestampPeriod * 1e-3 - dev0 + host0;
                    if (r < 0) continue;
                    size_t k = cnt[yes][w]++;
                    t[yes][w][0][k] = t1 - t0; t[yes][w][1][k] = t2 - t0; t[yes][w][2][k] = d1 - d0; t[yes][w][3][k] = calib ? d0 - t0 : 0;
                }
            }
        }
        printf("dispatch c = a * b, n = 2^%d float32 in device memory (%u groups of 256), %g us gap before each call, median us:\n", log2n, groups, gap_us);
        for (int y = 1; y >= 0; y--) for (int w = 0; w < NW; w++) {
            size_t m = cnt[y][w];
            if (!m) continue;
            double call = median(t[y][w][1], m), dv = median(t[y][w][2], m);
            printf("  %-28s %-9s submit/release %5.2f  call %8.2f  device %8.2f  overhead %6.2f  start %6.2f\n", wn[w], y ? "" : "cancelled",
                   median(t[y][w][0], m), call, dv, call - dv, median(t[y][w][3], m));
        }
        /* a library's pattern: two held command buffers taking turns, the next one held while
           the released one runs (before its wait) or after its wait; against a plain submit */
        VkEvent ev2[2]; VkFence fe2[2]; VkQueryPool qp2[2]; Buf args2[2]; VkCommandBuffer cb2[2];
        cai.commandBufferCount = 2; CK(vkAllocateCommandBuffers(dev, &cai, cb2));
        for (int k = 0; k < 2; k++) {
            CK(vkCreateEvent(dev, &eci, 0, &ev2[k])); CK(vkCreateFence(dev, &fci, 0, &fe2[k]));
            VkQueryPoolCreateInfo qpi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO}; qpi.queryType = VK_QUERY_TYPE_TIMESTAMP; qpi.queryCount = 2;
            CK(vkCreateQueryPool(dev, &qpi, 0, &qp2[k]));
            args2[k] = make_buffer(dev, &mp, 256, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, 1);
            VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            CK(vkBeginCommandBuffer(cb2[k], &bi));
            VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER}; mb.srcAccessMask = VK_ACCESS_HOST_WRITE_BIT;
            mb.dstAccessMask = VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_SHADER_READ_BIT;
            vkCmdWaitEvents(cb2[k], 1, &ev2[k], VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            1, &mb, 0, 0, 0, 0);
            vkCmdResetQueryPool(cb2[k], qp2[k], 0, 2);
            vkCmdWriteTimestamp(cb2[k], VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp2[k], 0);
            vkCmdBindPipeline(cb2[k], VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
            vkCmdBindDescriptorSets(cb2[k], VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &ds, 0, 0);
            vkCmdPushConstants(cb2[k], pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &n4);
            vkCmdDispatchIndirect(cb2[k], args2[k].buf, 0);
            vkCmdWriteTimestamp(cb2[k], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp2[k], 1);
            CK(vkEndCommandBuffer(cb2[k]));
        }
        enum { P_PLAIN, P_BEFORE, P_AFTER, P_QUEUES, NP };
        static const char *pn[NP] = {"submitted, fence polled", "next held before the wait", "next held after the wait",
                                     "the same, on two queues"};
        double *pt[NP][2]; size_t pc[NP] = {0};
        for (int w = 0; w < NP; w++) for (int k = 0; k < 2; k++) pt[w][k] = calloc(cap, sizeof(double));
        /* (not on a CPU device: on lavapipe (Mesa 22.3) the held ways' first wait never ended,
           a hang not looked into further) */
        int cpu = pp->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
        for (int r = -1; r < rounds; r++) for (int w0 = 0; w0 < NP; w0++) {
            int w = (w0 + (r < 0 ? 0 : r)) % NP;
            if ((cpu && w != P_PLAIN) || (w == P_QUEUES && q2 == q)) continue;
            VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO}; si.commandBufferCount = 1;
            int cur = 0;
            if (w != P_PLAIN) {             /* the first one held */
                si.pCommandBuffers = &cb2[0];
                CK(vkResetEvent(dev, ev2[0])); CK(vkResetFences(dev, 1, &fe2[0])); CK(vkQueueSubmit(q, 1, &si, fe2[0]));
                /* (P_QUEUES: command buffer k always on queue k) */
            }
            for (int i = 0; i < (r < 0 ? 20 : reps); i++) {
                for (double g = now_us(); now_us() - g < gap_us;) {}
                double t0 = now_us();
                VkResult res;
                if (w == P_PLAIN) {
                    si.pCommandBuffers = &cbs[PLAIN];
                    CK(vkResetFences(dev, 1, &fence)); CK(vkQueueSubmit(q, 1, &si, fence));
                    while ((res = vkGetFenceStatus(dev, fence)) == VK_NOT_READY) {} CK(res);
                } else {
                    uint32_t *a2 = args2[cur].map; a2[0] = groups; a2[1] = a2[2] = 1;
                    CK(vkSetEvent(dev, ev2[cur]));
                    int nxt = 1 - cur;
                    si.pCommandBuffers = &cb2[nxt];
                    if (w == P_BEFORE || w == P_QUEUES) {
                        CK(vkResetEvent(dev, ev2[nxt])); CK(vkResetFences(dev, 1, &fe2[nxt]));
                        CK(vkQueueSubmit(w == P_QUEUES && nxt ? q2 : q, 1, &si, fe2[nxt]));
                    }
                    while ((res = vkGetFenceStatus(dev, fe2[cur])) == VK_NOT_READY) {} CK(res);
                    if (w == P_AFTER) { CK(vkResetEvent(dev, ev2[nxt])); CK(vkResetFences(dev, 1, &fe2[nxt])); CK(vkQueueSubmit(q, 1, &si, fe2[nxt])); }
                }
                double t2 = now_us();
                uint64_t ts[2];
                CK(vkGetQueryPoolResults(dev, w == P_PLAIN ? qp : qp2[cur], 0, 2, sizeof ts, ts, 8, VK_QUERY_RESULT_64_BIT));
                if (w != P_PLAIN) cur = 1 - cur;
                if (r < 0) continue;
                size_t k = pc[w]++;
                pt[w][0][k] = t2 - t0; pt[w][1][k] = (double)(ts[1] - ts[0]) * pp->limits.timestampPeriod * 1e-3;
            }
            if (w != P_PLAIN) {             /* the last one held: released empty */
                ((uint32_t *)args2[cur].map)[0] = 0; CK(vkSetEvent(dev, ev2[cur]));
                CK(vkWaitForFences(dev, 1, &fe2[cur], VK_TRUE, UINT64_MAX));
            }
        }
        printf("two held command buffers taking turns (%g us gap)%s, median us:\n", gap_us,
               q2 == q ? " (one queue in the family: no two-queue way)" : "");
        for (int w = 0; w < NP; w++) {
            if (!pc[w]) { printf("  %-28s not run on a CPU device (it hangs there)\n", pn[w]); continue; }
            double call = median(pt[w][0], pc[w]), dv = median(pt[w][1], pc[w]);
            printf("  %-28s call %8.2f  device %8.2f  overhead %6.2f\n", pn[w], call, dv, call - dv);
        }
    }
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 200, rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (argc > 6) gap_us = atof(argv[6]);
    VkDeviceSize fill = (VkDeviceSize)(argc > 3 ? atoi(argv[3]) : 768) << 20;
    VkApplicationInfo ai = {VK_STRUCTURE_TYPE_APPLICATION_INFO}; ai.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO}; ici.pApplicationInfo = &ai;
    VkInstance inst; CK(vkCreateInstance(&ici, 0, &inst));
    uint32_t n = 1; VkPhysicalDevice pd; vkEnumeratePhysicalDevices(inst, &n, &pd);
    if (!n) { fprintf(stderr, "no device\n"); return 1; }
    VkPhysicalDeviceProperties pp; vkGetPhysicalDeviceProperties(pd, &pp);
    uint32_t qn = 16; VkQueueFamilyProperties qf[16]; vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, qf);
    uint32_t qi = 0; while (qi < qn && !(qf[qi].queueFlags & VK_QUEUE_COMPUTE_BIT)) qi++;
    VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    float prios[2] = {1.0f, 1.0f};
    qci.queueFamilyIndex = qi; qci.queueCount = qf[qi].queueCount > 1 ? 2 : 1; qci.pQueuePriorities = prios;
    VkPhysicalDeviceTimelineSemaphoreFeatures tlf = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2}; f2.pNext = &tlf;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    int timeline = pp.apiVersion >= VK_API_VERSION_1_2 && tlf.timelineSemaphore;
    uint32_t en = 0; vkEnumerateDeviceExtensionProperties(pd, 0, &en, 0);
    VkExtensionProperties *ep = calloc(en, sizeof *ep); vkEnumerateDeviceExtensionProperties(pd, 0, &en, ep);
    int calibrated = 0, conditional = 0;
    for (uint32_t i = 0; i < en; i++) {
        calibrated |= !strcmp(ep[i].extensionName, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
        conditional |= !strcmp(ep[i].extensionName, VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME);
    }
    VkPhysicalDeviceConditionalRenderingFeaturesEXT crf = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CONDITIONAL_RENDERING_FEATURES_EXT};
    if (conditional) {
        VkPhysicalDeviceFeatures2 g2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2}; g2.pNext = &crf;
        vkGetPhysicalDeviceFeatures2(pd, &g2);
        conditional = crf.conditionalRendering && argc > 4;
        crf.inheritedConditionalRendering = VK_FALSE;
        crf.pNext = tlf.pNext; tlf.pNext = &crf;
    }
    const char *exts[2]; uint32_t next_ext = 0;
    if (calibrated) exts[next_ext++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
    if (conditional) exts[next_ext++] = VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.queueCreateInfoCount = 1; dci.pQueueCreateInfos = &qci; dci.pNext = timeline ? &tlf : 0;
    dci.enabledExtensionCount = next_ext; dci.ppEnabledExtensionNames = exts;
    if (!timeline && conditional) dci.pNext = &crf;
    VkDevice dev; CK(vkCreateDevice(pd, &dci, 0, &dev));
    PFN_vkGetCalibratedTimestampsEXT calib = calibrated ?
        (PFN_vkGetCalibratedTimestampsEXT)vkGetDeviceProcAddr(dev, "vkGetCalibratedTimestampsEXT") : 0;
    VkQueue q; vkGetDeviceQueue(dev, qi, 0, &q);
    VkQueue q2 = q;             /* a second queue of the family, where there is one */
    if (qci.queueCount > 1) vkGetDeviceQueue(dev, qi, 1, &q2);

    /* the filled buffer, in device-local memory */
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = fill; bci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer buf; CK(vkCreateBuffer(dev, &bci, 0, &buf));
    VkMemoryRequirements mr; vkGetBufferMemoryRequirements(dev, buf, &mr);
    VkPhysicalDeviceMemoryProperties mp; vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO}; mai.allocationSize = mr.size;
    mai.memoryTypeIndex = memory_type(&mp, mr.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    VkDeviceMemory mem; CK(vkAllocateMemory(dev, &mai, 0, &mem)); CK(vkBindBufferMemory(dev, buf, mem, 0));
    /* the flag: host memory (cached where there is such), written by the device, read by the host */
    bci.size = 256;
    VkBuffer fbuf; CK(vkCreateBuffer(dev, &bci, 0, &fbuf));
    vkGetBufferMemoryRequirements(dev, fbuf, &mr);
    mai.allocationSize = mr.size;
    mai.memoryTypeIndex = memory_type(&mp, mr.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                      VK_MEMORY_PROPERTY_HOST_CACHED_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VkDeviceMemory fmem; CK(vkAllocateMemory(dev, &mai, 0, &fmem)); CK(vkBindBufferMemory(dev, fbuf, fmem, 0));
    volatile uint32_t *flag; CK(vkMapMemory(dev, fmem, 0, VK_WHOLE_SIZE, 0, (void **)&flag));
    VkQueryPoolCreateInfo qpi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO}; qpi.queryType = VK_QUERY_TYPE_TIMESTAMP; qpi.queryCount = 2;
    VkQueryPool qp; CK(vkCreateQueryPool(dev, &qpi, 0, &qp));

    VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO}; cpi.queueFamilyIndex = qi;
    VkCommandPool pool; CK(vkCreateCommandPool(dev, &cpi, 0, &pool));
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool; cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY; cai.commandBufferCount = 8;
    VkCommandBuffer cbs[8]; CK(vkAllocateCommandBuffers(dev, &cai, cbs));   /* [event?*4 + flag?*2 + fill?] */
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkEventCreateInfo eci = {VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent event; CK(vkCreateEvent(dev, &eci, 0, &event));
    for (int k = 0; k < 8; k++) {
        CK(vkBeginCommandBuffer(cbs[k], &bi));
        if (k & 4) vkCmdWaitEvents(cbs[k], 1, &event, VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                   0, 0, 0, 0, 0, 0);
        if (k & 1) {
            vkCmdResetQueryPool(cbs[k], qp, 0, 2);
            vkCmdWriteTimestamp(cbs[k], VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
            vkCmdFillBuffer(cbs[k], buf, 0, fill, 0x3f800000u);
            vkCmdWriteTimestamp(cbs[k], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1);
        }
        if (k & 2) {            /* the flag after the work, then made visible to the host */
            VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
            mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT; mb.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
            vkCmdPipelineBarrier(cbs[k], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, 0, 0, 0);
            vkCmdFillBuffer(cbs[k], fbuf, 0, 4, 1u);
            mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
            vkCmdPipelineBarrier(cbs[k], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, 0, 0, 0);
        }
        CK(vkEndCommandBuffer(cbs[k]));
    }

    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO}; VkFence fence; CK(vkCreateFence(dev, &fci, 0, &fence));
    VkSemaphoreTypeCreateInfo sti = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO}; sti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO}; sci.pNext = &sti;
    VkSemaphore sem = VK_NULL_HANDLE; uint64_t value = 0;
    if (timeline) CK(vkCreateSemaphore(dev, &sci, 0, &sem));
    int ways = timeline ? NWAYS : TL_POLL;     /* (the timeline ways last) */

    size_t cap = (size_t)reps * rounds;
    double *t[2][NWAYS][7];   /* [empty/fill][way][reset, submit, wait, overhead, start, end, fence after flag] */
    for (int c = 0; c < 2; c++) for (int w = 0; w < NWAYS; w++) for (int k = 0; k < 7; k++) t[c][w][k] = calloc(cap, sizeof(double));
    /* the device's clock on the host's: one calibration per round */
    double dev0 = 0, host0 = 0;
    VkCalibratedTimestampInfoEXT cti[2] = {{VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, 0, VK_TIME_DOMAIN_DEVICE_EXT},
                                           {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, 0, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
    size_t cnt[2][NWAYS] = {{0}};
    printf("vk_roundtrip on %s (driver %u.%u), %d rounds of %d calls per way, fill %llu MiB; median us\n",
           pp.deviceName, pp.driverVersion >> 22, (pp.driverVersion >> 14) & 0xff, rounds, reps,
           (unsigned long long)(fill >> 20));
    for (int r = -1; r < rounds; r++) {          /* round -1 warms up */
        if (calib) {
            uint64_t ts[2], dev_max;
            CK(calib(dev, 2, cti, ts, &dev_max));
            dev0 = (double)ts[0] * pp.limits.timestampPeriod * 1e-3; host0 = (double)ts[1] * 1e-3;
        }
        for (int c = 0; c < 2; c++) for (int w0 = 0; w0 < ways; w0++) {
            int w = (w0 + (r < 0 ? 0 : r)) % ways;
            VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO}; si.commandBufferCount = 1;
            si.pCommandBuffers = &cbs[c | (w == FLAG ? 2 : 0) | (w == EVENT ? 4 : 0)];
            VkTimelineSemaphoreSubmitInfo tsi = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
            VkPipelineStageFlags all = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            for (int i = 0; i < (r < 0 ? 20 : reps); i++) {
                uint64_t gate = 0, next = 0;
                if (w == EVENT) {               /* held submit */
                    CK(vkResetEvent(dev, event)); CK(vkResetFences(dev, 1, &fence));
                    CK(vkQueueSubmit(q, 1, &si, fence));
                } else if (w == TL_GATE) {
                    gate = ++value; next = ++value;
                    tsi.waitSemaphoreValueCount = 1; tsi.pWaitSemaphoreValues = &gate;
                    tsi.signalSemaphoreValueCount = 1; tsi.pSignalSemaphoreValues = &next;
                    si.pNext = &tsi; si.waitSemaphoreCount = 1; si.pWaitSemaphores = &sem; si.pWaitDstStageMask = &all;
                    si.signalSemaphoreCount = 1; si.pSignalSemaphores = &sem;
                    CK(vkQueueSubmit(q, 1, &si, VK_NULL_HANDLE));
                }
                for (double g = now_us(); now_us() - g < 20;) {}    /* the host's gap */
                double t0 = now_us(), t1 = t0;
                if (w == FLAG) *flag = 0;
                if (w == EVENT) {
                    CK(vkSetEvent(dev, event));
                } else if (w == TL_GATE) {
                    VkSemaphoreSignalInfo ssi = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO}; ssi.semaphore = sem; ssi.value = gate;
                    CK(vkSignalSemaphore(dev, &ssi));
                } else if (w < TL_POLL) {
                    CK(vkResetFences(dev, 1, &fence)); t1 = now_us();
                    CK(vkQueueSubmit(q, 1, &si, fence));
                } else {
                    next = ++value;
                    tsi.waitSemaphoreValueCount = 0; si.waitSemaphoreCount = 0;
                    tsi.signalSemaphoreValueCount = 1; tsi.pSignalSemaphoreValues = &next;
                    si.pNext = &tsi; si.signalSemaphoreCount = 1; si.pSignalSemaphores = &sem;
                    CK(vkQueueSubmit(q, 1, &si, VK_NULL_HANDLE));
                }
                double t2 = now_us();
                VkResult res;
                double tflag = 0;
                switch (w) {
                case BLOCK: CK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX)); break;
                case YIELD: while ((res = vkGetFenceStatus(dev, fence)) == VK_NOT_READY) sched_yield(); CK(res); break;
                case PAUSE: while ((res = vkGetFenceStatus(dev, fence)) == VK_NOT_READY) _mm_pause(); CK(res); break;
                case SPIN: case EVENT: while ((res = vkGetFenceStatus(dev, fence)) == VK_NOT_READY) {} CK(res); break;
                case FLAG: while (!*flag) _mm_pause();
                    tflag = now_us();
                    while ((res = vkGetFenceStatus(dev, fence)) == VK_NOT_READY) {} CK(res); break;
                case TL_POLL: case TL_GATE: { uint64_t v = 0; do CK(vkGetSemaphoreCounterValue(dev, sem, &v)); while (v < value); break; }
                case TL_WAIT: { VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
                    wi.semaphoreCount = 1; wi.pSemaphores = &sem; wi.pValues = &value;
                    CK(vkWaitSemaphores(dev, &wi, UINT64_MAX)); break; }
                }
                double t3 = now_us(), dev_us = 0, start = 0, end = 0;
                if (w == FLAG) { double f = tflag; tflag = t3 - f; t3 = f; }   /* the call ends at the flag */
                if (c == 1) {
                    uint64_t ts[2];
                    CK(vkGetQueryPoolResults(dev, qp, 0, 2, sizeof ts, ts, 8, VK_QUERY_RESULT_64_BIT));
                    double d0 = (double)ts[0] * pp.limits.timestampPeriod * 1e-3 - dev0 + host0;
                    double d1 = (double)ts[1] * pp.limits.timestampPeriod * 1e-3 - dev0 + host0;
                    dev_us = d1 - d0; start = d0 - t0; end = t3 - d1;
                }
                if (r < 0) continue;
                size_t k = cnt[c][w]++;
                t[c][w][0][k] = t1 - t0; t[c][w][1][k] = t2 - t1; t[c][w][2][k] = t3 - t2; t[c][w][3][k] = t3 - t0 - dev_us;
                t[c][w][4][k] = start; t[c][w][5][k] = end; t[c][w][6][k] = tflag;
            }
        }
    }
    for (int c = 0; c < 2; c++) {
        printf("%s:\n", c ? "fill (device time from timestamps)" : "empty command buffer");
        for (int w = 0; w < ways; w++) {
            size_t m = cnt[c][w];
            double reset = median(t[c][w][0], m), sub = median(t[c][w][1], m), wait = median(t[c][w][2], m), over = median(t[c][w][3], m);
            printf("  %-28s reset %5.2f  submit %6.2f  wait %7.2f  %s %6.2f", NAMES[w], reset, sub, wait,
                   c ? "overhead" : "total", over);
            if (c && calib) printf("  (start %6.2f  end %6.2f)", median(t[c][w][4], m), median(t[c][w][5], m));
            if (w == FLAG) printf("  fence after the flag %5.2f", median(t[c][w][6], m));
            printf("\n");
        }
    }
    if (!timeline) printf("(no timeline semaphores on this device)\n");
    if (!calib) printf("(no VK_EXT_calibrated_timestamps on this device: no start / end split)\n");
    if (conditional) dispatches(dev, pd, &pp, q, q2, qi, argv[4], argc > 5 ? atoi(argv[5]) : 26, reps, rounds, qp, calib, cti);
    else printf("(no dispatch section: %s)\n", argc > 4 ? "no VK_EXT_conditional_rendering" : "no SPIR-V file given");
    return 0;
}
