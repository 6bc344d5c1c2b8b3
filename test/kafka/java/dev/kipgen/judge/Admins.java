package dev.kipgen.judge;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/** Admin scenarios: topics, partitions, configs, ACLs, groups, the cluster, offsets. */
final class Admins {
    private static final List<String> TOPIC_CONFIGS = List.of("cleanup.policy", "compression.type", "max.message.bytes", "retention.ms", "segment.bytes", "message.timestamp.type", "min.insync.replicas");

    private final Clients clients;

    Admins(Clients clients) {
        this.clients = clients;
    }

    void topics(Out out) throws Exception {
        String topic = Names.of("judge-admin-topic");
        try (Admin admin = clients.admin()) {
            out.step("createTopics", () -> {
                admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
                return null;
            });
            Clients.createTopic(admin, Names.of("judge-admin-other"), 1);
            out.step("createTopics again", () -> {
                admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
                return null;
            });
            out.step("createTopics bad name", () -> {
                admin.createTopics(List.of(new NewTopic("bad/name", 1, (short) 1))).all().get();
                return null;
            });
            out.step("createTopics replication 3", () -> {
                admin.createTopics(List.of(new NewTopic(Names.of("judge-admin-rf3"), 1, (short) 3))).all().get();
                return null;
            });
            out.step("createTopics zero partitions", () -> {
                admin.createTopics(List.of(new NewTopic(Names.of("judge-admin-zero"), 0, (short) 1))).all().get();
                return null;
            });
            out.step("createTopics default partitions", () -> {
                admin.createTopics(List.of(new NewTopic(Names.of("judge-admin-default"), java.util.Optional.empty(), java.util.Optional.empty()))).all().get();
                return "partitions=" + waitPartitions(admin, Names.of("judge-admin-default"), 1).partitions().size();
            });
            out.step("describeTopics", () -> describe(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic)));
            out.step("describeTopics missing", () -> describe(admin.describeTopics(List.of(Names.of("judge-admin-missing"))).allTopicNames().get().get(Names.of("judge-admin-missing"))));
            out.step("createPartitions 3", () -> {
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get();
                return null;
            });
            out.step("describeTopics after", () -> describe(waitPartitions(admin, topic, 3)));
            out.step("createPartitions 2", () -> {
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all().get();
                return null;
            });
            out.step("createPartitions missing", () -> {
                admin.createPartitions(Map.of(Names.of("judge-admin-missing"), NewPartitions.increaseTo(2))).all().get();
                return null;
            });
            out.step("listTopics", () -> admin.listTopics().names().get().stream().filter(n -> n.startsWith(Names.of("judge-admin"))).sorted().collect(Collectors.joining(",")));
            out.step("deleteTopics", () -> {
                admin.deleteTopics(List.of(Names.of("judge-admin-other"))).all().get();
                return null;
            });
            out.step("deleteTopics missing", () -> {
                admin.deleteTopics(List.of(Names.of("judge-admin-missing"))).all().get();
                return null;
            });
        }
    }

    private static TopicDescription waitPartitions(Admin admin, String topic, int n) throws Exception {
        long deadline = System.nanoTime() + Clients.PATIENCE.toNanos();
        while (true) {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            if (d.partitions().size() >= n || System.nanoTime() > deadline) return d;
            Thread.sleep(50);
        }
    }

    private static String describe(TopicDescription d) {
        StringBuilder sb = new StringBuilder("name=" + d.name() + " internal=" + d.isInternal() + " partitions=" + d.partitions().size());
        for (TopicPartitionInfo p : d.partitions()) {
            sb.append(" p").append(p.partition()).append(":leader=").append(p.leader() == null ? "none" : "node")
                    .append(",replicas=").append(p.replicas().size()).append(",isr=").append(p.isr().size());
        }
        return sb.toString();
    }

    void configs(Out out) throws Exception {
        String topic = Names.of("judge-admin-configs");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 1);
            configs(out, "describeConfigs", admin, resource);
            out.step("incrementalAlterConfigs set", () -> {
                admin.incrementalAlterConfigs(Map.of(resource, List.of(
                        new AlterConfigOp(new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET),
                        new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET)))).all().get();
                return null;
            });
            configs(out, "after set", admin, resource);
            out.step("incrementalAlterConfigs append", () -> {
                admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry("cleanup.policy", "delete"), AlterConfigOp.OpType.APPEND)))).all().get();
                return null;
            });
            configs(out, "after append", admin, resource);
            out.step("incrementalAlterConfigs delete", () -> {
                admin.incrementalAlterConfigs(Map.of(resource, List.of(
                        new AlterConfigOp(new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE),
                        new AlterConfigOp(new ConfigEntry("cleanup.policy", ""), AlterConfigOp.OpType.DELETE)))).all().get();
                return null;
            });
            configs(out, "after delete", admin, resource);
            out.step("incrementalAlterConfigs unknown", () -> {
                admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry("no.such.config", "1"), AlterConfigOp.OpType.SET)))).all().get();
                return null;
            });
            out.step("incrementalAlterConfigs bad value", () -> {
                admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "soon"), AlterConfigOp.OpType.SET)))).all().get();
                return null;
            });
            out.step("describeConfigs missing topic", () -> {
                admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, Names.of("judge-admin-missing")))).all().get();
                return null;
            });
            out.step("createTopics with configs", () -> {
                admin.createTopics(List.of(new NewTopic(Names.of("judge-admin-configured"), 1, (short) 1).configs(Map.of("retention.ms", "7200000")))).all().get();
                return null;
            });
            configs(out, "configured topic", admin, new ConfigResource(ConfigResource.Type.TOPIC, Names.of("judge-admin-configured")));
        }
    }

    /** One line per config of TOPIC_CONFIGS: `<label> <name> <value> <source>`. */
    private static void configs(Out out, String label, Admin admin, ConfigResource resource) {
        Config[] config = new Config[1];
        out.step(label, () -> {
            config[0] = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            return null;
        });
        if (config[0] == null) return;
        for (String name : TOPIC_CONFIGS) {
            ConfigEntry e = config[0].get(name);
            out.line(label + " " + name, e == null ? "absent" : e.value() + " " + e.source());
        }
    }

    /**
     * ACLs, on a listener whose principal is a super user of the broker's authorizer (without an
     * authorizer Kafka refuses them all: SecurityDisabledException).
     */
    void acls(Out out) throws Exception {
        ResourcePattern pattern = new ResourcePattern(ResourceType.TOPIC, Names.of("judge-acl"), PatternType.LITERAL);
        AclBinding binding = new AclBinding(pattern, new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
        try (Admin admin = clients.admin()) {
            out.step("createAcls", () -> {
                admin.createAcls(List.of(binding)).all().get();
                return null;
            });
            out.step("describeAcls", () -> {
                // This topic's ACLs only: other test files of the run create ACLs on the same Kafka.
                AclBindingFilter mine = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, Names.of("judge-acl"), PatternType.ANY), AccessControlEntryFilter.ANY);
                Collection<AclBinding> found = admin.describeAcls(mine).values().get();
                return found.stream().map(AclBinding::toString).sorted().collect(Collectors.joining(" "));
            });
            out.step("deleteAcls", () -> {
                Collection<AclBinding> deleted = admin.deleteAcls(List.of(new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, Names.of("judge-acl"), PatternType.LITERAL), AccessControlEntryFilter.ANY))).all().get();
                return "deleted=" + deleted.size();
            });
        }
    }

    /** The groups the consumer and share scenarios left behind (run after them). */
    void groups(Out out) throws Exception {
        try (Admin admin = clients.admin()) {
            out.step("listGroups", () -> {
                Collection<GroupListing> groups = admin.listGroups(new ListGroupsOptions()).all().get();
                return groups.stream().filter(g -> g.groupId().startsWith(Names.of("judge-"))).sorted(Comparator.comparing(GroupListing::groupId))
                        .map(g -> g.groupId() + ":" + g.type().map(Object::toString).orElse("?") + "/" + g.protocol() + "/" + g.groupState().map(Object::toString).orElse("?"))
                        .collect(Collectors.joining(" "));
            });
            out.step("describeConsumerGroups", () -> {
                Map<String, ConsumerGroupDescription> d = admin.describeConsumerGroups(List.of(Names.of("judge-classic"), Names.of("judge-consumer"), Names.of("judge-missing"))).all().get();
                return new TreeMap<>(d).values().stream().map(Admins::consumerGroup).collect(Collectors.joining(" "));
            });
            for (String g : List.of(Names.of("judge-classic"), Names.of("judge-consumer"), Names.of("judge-missing"))) {
                out.step("describeConsumerGroups " + g, () -> consumerGroup(admin.describeConsumerGroups(List.of(g)).all().get().get(g)));
            }
            for (String g : List.of(Names.of("judge-share-implicit"), Names.of("judge-share-explicit"), Names.of("judge-missing-share"))) {
                out.step("describeShareGroups " + g, () -> {
                    ShareGroupDescription d = admin.describeShareGroups(List.of(g)).all().get().get(g);
                    return d.groupId() + ":" + d.groupState() + "/members=" + d.members().size();
                });
            }
            out.step("listShareGroupOffsets", () -> {
                var offsets = admin.listShareGroupOffsets(Map.of(Names.of("judge-share-explicit"), new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(Names.of("judge-share-explicit")).get();
                return new TreeMap<>(offsets.entrySet().stream().collect(Collectors.toMap(e -> e.getKey().toString(), e -> e.getValue() == null ? "none" : "start=" + e.getValue().startOffset() + ",lag=" + e.getValue().lag().map(String::valueOf).orElse("none")))).toString();
            });
            out.step("listConsumerGroupOffsets", () -> offsets(admin.listConsumerGroupOffsets(Names.of("judge-classic")).partitionsToOffsetAndMetadata().get()));
            out.step("alterConsumerGroupOffsets", () -> {
                admin.alterConsumerGroupOffsets(Names.of("judge-classic"), Map.of(new TopicPartition(Names.of("judge-group-classic"), 0), new OffsetAndMetadata(1))).all().get();
                return offsets(admin.listConsumerGroupOffsets(Names.of("judge-classic")).partitionsToOffsetAndMetadata().get());
            });
            out.step("deleteConsumerGroupOffsets", () -> {
                admin.deleteConsumerGroupOffsets(Names.of("judge-classic"), Set.of(new TopicPartition(Names.of("judge-group-classic"), 1))).all().get();
                return offsets(admin.listConsumerGroupOffsets(Names.of("judge-classic")).partitionsToOffsetAndMetadata().get());
            });
            out.step("listConsumerGroupOffsets missing", () -> offsets(admin.listConsumerGroupOffsets(Names.of("judge-missing")).partitionsToOffsetAndMetadata().get()));
            out.step("deleteConsumerGroups", () -> {
                admin.deleteConsumerGroups(List.of(Names.of("judge-consumer"))).all().get();
                return null;
            });
            out.step("deleteConsumerGroups missing", () -> {
                admin.deleteConsumerGroups(List.of(Names.of("judge-missing"))).all().get();
                return null;
            });
        }
    }

    private static String consumerGroup(ConsumerGroupDescription d) {
        return d.groupId() + ":" + d.type() + "/" + d.groupState() + "/assignor=" + (d.partitionAssignor().isEmpty() ? "''" : d.partitionAssignor()) + "/members=" + d.members().size() + "/simple=" + d.isSimpleConsumerGroup();
    }

    private static String offsets(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<String, Long> sorted = new TreeMap<>();
        offsets.forEach((tp, om) -> sorted.put(tp.toString(), om == null ? null : om.offset()));
        return sorted.isEmpty() ? "none" : sorted.toString();
    }

    void cluster(Out out) throws Exception {
        try (Admin admin = clients.admin()) {
            out.step("describeCluster", () -> {
                DescribeClusterResult r = admin.describeCluster();
                Collection<Node> nodes = r.nodes().get();
                Node controller = r.controller().get();
                boolean controllerIsNode = nodes.stream().anyMatch(n -> n.id() == controller.id());
                return "nodes=" + nodes.size() + " controller-is-a-node=" + controllerIsNode + " cluster-id=" + (r.clusterId().get() != null);
            });
            out.step("describeFeatures", () -> {
                var f = admin.describeFeatures().featureMetadata().get().finalizedFeatures();
                // metadata.version and kraft.version belong to the KRaft quorum and depend on how it was formatted
                // (kraft.version is 0, so not listed, with static voters).
                return new TreeMap<>(f).entrySet().stream().filter(e -> !e.getKey().equals("metadata.version") && !e.getKey().equals("kraft.version"))
                        .map(e -> e.getKey() + "=" + e.getValue().maxVersionLevel()).collect(Collectors.joining(" "));
            });
        }
    }

    void offsets(Out out) throws Exception {
        String topic = Names.of("judge-admin-offsets");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 1);
            // Explicit timestamps, so that max-timestamp does not depend on the clock: a batch of one, a batch of three
            // whose middle record holds the maximum, and a later batch that ties it (the first record with it wins).
            try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-offsets"), Clients.props("linger.ms", "200"))) {
                long t = 1_700_000_000_000L;
                p.send(new ProducerRecord<>(topic, 0, t + 1, "k", "o0")).get();
                var inBatch = List.of(p.send(new ProducerRecord<>(topic, 0, t + 3, "k", "o1")), p.send(new ProducerRecord<>(topic, 0, t + 9, "k", "o2")), p.send(new ProducerRecord<>(topic, 0, t + 2, "k", "o3")));
                p.flush();
                for (var f : inBatch) f.get();
                p.send(new ProducerRecord<>(topic, 0, t + 9, "k", "o4")).get();
            }
            TopicPartition tp = new TopicPartition(topic, 0);
            for (var spec : List.of("earliest", "latest", "max-timestamp")) {
                out.step("listOffsets " + spec, () -> {
                    OffsetSpec s = switch (spec) {
                        case "earliest" -> OffsetSpec.earliest();
                        case "latest" -> OffsetSpec.latest();
                        default -> OffsetSpec.maxTimestamp();
                    };
                    ListOffsetsResult.ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, s)).partitionResult(tp).get();
                    return "offset=" + info.offset() + " timestamp=" + info.timestamp() + " leader-epoch=" + info.leaderEpoch().map(String::valueOf).orElse("none");
                });
            }
            out.step("deleteRecords", () -> {
                var r = admin.deleteRecords(Map.of(tp, org.apache.kafka.clients.admin.RecordsToDelete.beforeOffset(2))).lowWatermarks().get(tp).get();
                return "low-watermark=" + r.lowWatermark() + " earliest=" + admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get().offset();
            });
        }
    }
}
