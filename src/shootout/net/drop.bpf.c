/* The tc and XDP rungs of the drop ladder: drop UDP to port 9, pass everything else.
 * Both parse the same headers as the nft rule (udp dport 9) matches, so the rungs differ
 * only in where the packet dies. Built by the host's clang (-target bpf) and attached by
 * the host's iproute2; no libbpf headers needed. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <linux/pkt_cls.h>

#define SEC(name) __attribute__((section(name), used))
#define DROP_PORT 9
#define HEADERS (sizeof(struct ethhdr) + sizeof(struct iphdr) + sizeof(struct udphdr))

static long (*bpf_skb_pull_data)(struct __sk_buff *skb, __u32 len) = (void *)BPF_FUNC_skb_pull_data;

static __always_inline int is_target(void *data, void *end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;

	if ((void *)(ip + 1) > end || eth->h_proto != __builtin_bswap16(ETH_P_IP) || ip->protocol != IPPROTO_UDP)
		return 0;
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > end)
		return 0;
	return udp->dest == __builtin_bswap16(DROP_PORT);
}

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	return is_target((void *)(long)ctx->data, (void *)(long)ctx->data_end) ? XDP_DROP : XDP_PASS;
}

SEC("tc")
int tc_drop(struct __sk_buff *skb)
{
	/* An AF_PACKET sender (trafgen) leaves all but the link header in page fragments:
	 * pull the headers into the linear part so they can be read directly. */
	if (skb->data_end - skb->data < HEADERS)
		bpf_skb_pull_data(skb, HEADERS);
	return is_target((void *)(long)skb->data, (void *)(long)skb->data_end) ? TC_ACT_SHOT : TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
