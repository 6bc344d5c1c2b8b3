package dev.kipgen.judge;

import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Admin's view of groups while their members are there: a classic group, a KIP-848 consumer
 * group and a share group, one member each, described with members, assignments and epochs.
 */
final class ActiveGroups {
    private final Clients clients;

    ActiveGroups(Clients clients) {
        this.clients = clients;
    }

    void run(Out out) throws Exception {
        String topic = Names.of("judge-active");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 2);
            var share = clients.base(Names.of("judge-active-share-1"));
            share.put("group.id", Names.of("judge-active-share"));
            share.put("key.deserializer", StringDeserializer.class.getName());
            share.put("value.deserializer", StringDeserializer.class.getName());
            try (KafkaConsumer<String, String> classic = clients.consumer(Names.of("judge-active-classic-1"), Clients.props("group.id", Names.of("judge-active-classic"), "group.protocol", "classic"));
                    KafkaConsumer<String, String> consumer = clients.consumer(Names.of("judge-active-consumer-1"), Clients.props("group.id", Names.of("judge-active-consumer"), "group.protocol", "consumer"));
                    KafkaShareConsumer<String, String> shared = new KafkaShareConsumer<>(share)) {
                classic.subscribe(List.of(topic));
                consumer.subscribe(List.of(topic));
                shared.subscribe(List.of(topic));
                out.step("classic assignment", () -> Clients.partitions(assigned(classic)));
                out.step("consumer assignment", () -> Clients.partitions(assigned(consumer)));
                out.step("share assignment", () -> shareAssignment(admin, shared));
                out.step("listGroups Stable", () -> {
                    Collection<GroupListing> groups = admin.listGroups(new ListGroupsOptions().inGroupStates(Set.of(GroupState.STABLE))).all().get();
                    return groups.stream().filter(g -> g.groupId().startsWith(Names.of("judge-active"))).map(GroupListing::groupId).sorted().collect(Collectors.joining(","));
                });
                for (String g : List.of(Names.of("judge-active-classic"), Names.of("judge-active-consumer"))) {
                    out.step("describeConsumerGroups " + g, () -> describe(admin.describeConsumerGroups(List.of(g)).all().get().get(g)));
                }
                out.step("describeShareGroups", () -> describe(admin.describeShareGroups(List.of(Names.of("judge-active-share"))).all().get().get(Names.of("judge-active-share"))));
                out.step("describeConsumerGroups a share group", () -> describe(admin.describeConsumerGroups(List.of(Names.of("judge-active-share"))).all().get().get(Names.of("judge-active-share"))));
                out.step("describeShareGroups a consumer group", () -> describe(admin.describeShareGroups(List.of(Names.of("judge-active-consumer"))).all().get().get(Names.of("judge-active-consumer"))));
                out.step("deleteConsumerGroups active", () -> {
                    admin.deleteConsumerGroups(List.of(Names.of("judge-active-classic"))).all().get();
                    return null;
                });
            }
        }
    }

    private static Set<TopicPartition> assigned(KafkaConsumer<String, String> c) {
        long deadline = System.nanoTime() + Clients.PATIENCE.toNanos();
        while (c.assignment().isEmpty() && System.nanoTime() < deadline) c.poll(Duration.ofMillis(200));
        return c.assignment();
    }

    /** The share group's one member's assignment, as Admin describes it once the member has one. */
    private static String shareAssignment(Admin admin, KafkaShareConsumer<String, String> c) throws Exception {
        long deadline = System.nanoTime() + Clients.PATIENCE.toNanos();
        while (true) {
            c.poll(Duration.ofMillis(200));
            ShareGroupDescription d = admin.describeShareGroups(List.of(Names.of("judge-active-share"))).all().get().get(Names.of("judge-active-share"));
            boolean assigned = d.members().stream().anyMatch(m -> !m.assignment().topicPartitions().isEmpty());
            if (assigned || System.nanoTime() > deadline) {
                return d.members().stream().map(m -> partitions(m.assignment().topicPartitions())).collect(Collectors.joining(";"));
            }
        }
    }

    private static String partitions(Set<TopicPartition> tps) {
        return tps.isEmpty() ? "none" : Clients.partitions(tps);
    }

    private static String describe(ConsumerGroupDescription d) {
        String members = d.members().stream().sorted(Comparator.comparing(MemberDescription::clientId))
                .map(m -> m.clientId() + "[host=" + m.host() + " assigned=" + partitions(m.assignment().topicPartitions())
                        + " target=" + m.targetAssignment().map(t -> partitions(t.topicPartitions())).orElse("absent")
                        + " epoch=" + m.memberEpoch().map(e -> e.equals(d.groupEpoch().orElse(null)) ? "group's" : "other").orElse("absent") + " instance=" + m.groupInstanceId().orElse("none") + "]")
                .collect(Collectors.joining(" "));
        return d.type() + "/" + d.groupState() + " assignor=" + (d.partitionAssignor().isEmpty() ? "''" : d.partitionAssignor())
                + " epochs=" + epochs(d.groupEpoch().orElse(null), d.targetAssignmentEpoch().orElse(null))
                + " simple=" + d.isSimpleConsumerGroup() + " members: " + members;
    }

    private static String describe(ShareGroupDescription d) {
        String members = d.members().stream().sorted(Comparator.comparing(ShareMemberDescription::clientId))
                .map(m -> m.clientId() + "[host=" + m.host() + " assigned=" + partitions(m.assignment().topicPartitions()) + " epoch=" + (m.memberEpoch() == d.groupEpoch() ? "group's" : "other") + "]")
                .collect(Collectors.joining(" "));
        return d.groupState() + " epochs=" + epochs(d.groupEpoch(), d.targetAssignmentEpoch()) + " members: " + members;
    }

    /**
     * Whether the target assignment caught up with the group epoch, not the numbers: Kafka bumps the
     * epoch again when its metadata image learns of a topic created a moment before the first member
     * joined (GroupMetadataManager.updateSubscriptionMetadata: a new metadata hash), so the count
     * depends on timing.
     */
    private static String epochs(Integer group, Integer target) {
        if (group == null || target == null) return group == null && target == null ? "absent" : "partly absent";
        return group.equals(target) ? "target caught up" : "target behind";
    }
}
